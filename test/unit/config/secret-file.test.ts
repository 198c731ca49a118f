import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../../src/config/load';
import { makeTempDir } from '../../helpers/temp-dir';

// `secretFile` (docs/configuration.md "Keys", docs/running.md "A system service"): the secret from
// a file such as a systemd credential in $CREDENTIALS_DIRECTORY, through SVC_SECRET_FILE or the key.

describe('secretFile', () => {
  const temp = makeTempDir();
  afterAll(() => temp.cleanup());
  const write = (name: string, text: string) => {
    const file = path.join(temp.dir, name);
    fs.writeFileSync(file, text, { mode: 0o600 });
    return file;
  };
  const load = (env: NodeJS.ProcessEnv) => loadConfig({ cwd: temp.dir, env: { HOME: temp.dir, ...env } });

  it('When SVC_SECRET_FILE names a credential file, then its one line without the line ending is the secret', async () => {
    const file = write('credential', 'c2VjcmV0IGZyb20gc3lzdGVtZA==\n');
    const { config } = await load({ SVC_SECRET_FILE: file });
    expect(config.secret).toBe('c2VjcmV0IGZyb20gc3lzdGVtZA==');
  });

  it('When both secret and secretFile are set, then the start is refused naming both', async () => {
    const file = write('both', 'x\n');
    await expect(load({ SVC_SECRET_FILE: file, SVC_SECRET: 'y' })).rejects.toThrow(`secret and secretFile are both set: keep one (secretFile ${file})`);
  });

  it('When the file cannot be read or is empty, then the error names it', async () => {
    const missing = path.join(temp.dir, 'missing');
    await expect(load({ SVC_SECRET_FILE: missing })).rejects.toThrow(`cannot read secretFile ${missing}`);
    const empty = write('empty', '\n');
    await expect(load({ SVC_SECRET_FILE: empty })).rejects.toThrow(`secretFile ${empty} must hold the secret on one line`);
  });
});
