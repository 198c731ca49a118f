import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../../src/config/load';
import { makeTempDir } from '../../helpers/temp-dir';

// icecastSource (docs/configuration.md "Keys"): off unless a port is given.

const temp = makeTempDir('svc-icecast-config-');
afterAll(() => temp.cleanup());

test('off by default; --icecast-port arrives as text and becomes a number', async () => {
  const off = await loadConfig({ cwd: temp.dir, env: {} });
  expect(off.config.icecastSource.port).toBeUndefined();
  const on = await loadConfig({ cwd: temp.dir, env: {}, flags: { 'icecastSource.port': '8000' } });
  expect(on.config.icecastSource.port).toBe(8000);
  await expect(loadConfig({ cwd: temp.dir, env: {}, flags: { 'icecastSource.port': 'eight' } })).rejects.toThrow(/"icecastSource\.port": expected a number/);
});

test('a config file sets the port and its own password; a wrong type names the key', async () => {
  const file = path.join(temp.dir, 'svc.json');
  fs.writeFileSync(file, JSON.stringify({ icecastSource: { port: 8000, password: 'dj-pass' } }));
  const { config } = await loadConfig({ configFile: file, env: {} });
  expect(config.icecastSource).toEqual({ port: 8000, password: 'dj-pass' });
  fs.writeFileSync(file, JSON.stringify({ icecastSource: { port: 70000 } }));
  await expect(loadConfig({ configFile: file, env: {} })).rejects.toThrow(/icecastSource\.port/);
});
