import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../../src/config/load';
import { makeTempDir } from '../../helpers/temp-dir';

// docs/configuration.md (a line that sets a secret is shown with its value masked): a config
// error never prints the secret, in any shape.

const SECRET = 'hunter2-s3cret';

describe('config errors never show the secret', () => {
  const temp = makeTempDir('svc-config-secret-');
  afterAll(() => temp.cleanup());

  const errorFor = async (name: string, text: string): Promise<string> => {
    const dir = fs.mkdtempSync(path.join(temp.dir, 'case-'));
    fs.writeFileSync(path.join(dir, name), text);
    try {
      await loadConfig({ cwd: dir, env: {} });
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
    throw new Error(`no config error for ${text}`);
  };

  it.each([
    ['a YAML list under secret:', '.svcrc.yaml', `port: 8893\nsecret:\n  - ${SECRET}\n`],
    ['a YAML list with a syntax error inside', '.svcrc.yaml', `secret:\n  - ${SECRET}\n  - [${SECRET}\n`],
    ['a YAML block scalar with a bad line after it', '.svcrc.yaml', `secret: |\n  ${SECRET}\n bad: [\n`],
    ['a JSON value on the line after "secret":', '.svcrc.json', `{\n  "secret":\n    "${SECRET}" x\n}\n`],
    ['a JSON bare word after "secret":', '.svcrc.json', `{"port": 1, "secret": ${SECRET}}`],
    ['a JSON list under "secret"', '.svcrc.json', `{\n  "secret": [\n    "${SECRET}",\n  ]\n}\n`],
    ['a JSON object as client.secret', '.svcrc.json', JSON.stringify({ client: { secret: { value: SECRET } } })],
    ['a number list as an API key', '.svcrc.json', JSON.stringify({ enrichment: { fanarttv: { apiKey: [SECRET] } } })],
  ])('When the config holds %s, then the message names the file but not the secret', async (_case, name, text) => {
    const message = await errorFor(name, text);
    expect(message).toContain(name);
    expect(message).not.toContain(SECRET);
    expect(message).not.toMatch(/hunter|s3cret/);
  });

  it('When another key is wrong, then its value is still shown (it helps and is no secret)', async () => {
    expect(await errorFor('.svcrc.json', JSON.stringify({ port: 'eighty' }))).toContain('got "eighty"');
  });
});
