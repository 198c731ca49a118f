import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../../src/config/load';
import { ConfigError } from '../../../src/errors';
import { makeTempDir } from '../../helpers/temp-dir';

// docs/title-first.md: enrichment must end inside the processing budget; dedupeSeconds.

describe('config: the title-first keys', () => {
  const made: { cleanup: () => void }[] = [];
  afterAll(() => made.forEach((dir) => dir.cleanup()));
  const withConfig = (config: unknown) => {
    const dir = makeTempDir('svc-config-');
    made.push(dir);
    fs.writeFileSync(path.join(dir.dir, '.svcrc.json'), JSON.stringify(config));
    return loadConfig({ cwd: dir.dir, env: {} });
  };

  it('When enrichment.deadlineSeconds is not below processingTimeoutSeconds, then loading fails naming both keys', async () => {
    const error = await withConfig({ processingTimeoutSeconds: 5, enrichment: { deadlineSeconds: 5 } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect(String((error as Error).message)).toMatch(/"enrichment\.deadlineSeconds" \(5\) must be below "processingTimeoutSeconds" \(5\)/);
  });

  it('When the deadline is below the budget, then the config loads, with dedupeSeconds 600 by default', async () => {
    const { config } = await withConfig({ processingTimeoutSeconds: 5, enrichment: { deadlineSeconds: 4 } });
    expect(config.dedupeSeconds).toBe(600);
  });

  it('When dedupeSeconds is negative, then loading fails naming it', async () => {
    const error = await withConfig({ dedupeSeconds: -1 }).catch((caught: unknown) => caught);
    expect(String((error as Error).message)).toContain('"dedupeSeconds"');
  });
});
