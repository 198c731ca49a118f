import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { redactUrl } from '../../src/log';

const dist = path.join(__dirname, '..', '..', 'dist', 'log.js');

describe('redactUrl', () => {
  it('replaces every secret query value and keeps the rest', () => {
    expect(redactUrl('/v1/remoteinput?artist=A&secret=s3cret&title=T&SECRET=x')).toBe('/v1/remoteinput?artist=A&secret=[redacted]&title=T&SECRET=[redacted]');
    expect(redactUrl('/v1/remoteinput?secret=')).toBe('/v1/remoteinput?secret=[redacted]');
    expect(redactUrl('/v1/last')).toBe('/v1/last');
  });
});

describe('the stderr logger', () => {
  it('When the process exits right after logging, then every line still reaches stderr, in order', () => {
    const script = `const { createLogger } = require(${JSON.stringify(dist)}); const log = createLogger();
      log.info('first'); log.warn('second'); log.error('third'); process.exit(3);`;
    const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(result.status).toBe(3);
    const lines = result.stderr.trim().split('\n');
    expect(lines.map((line) => line.replace(/^\S+ /, ''))).toEqual(['info first', 'warn second', 'error third']);
    for (const line of lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /);
  });

  it('When lines are logged in later turns of the event loop, then each turn is written', () => {
    const script = `const { createLogger } = require(${JSON.stringify(dist)}); const log = createLogger();
      log.info('one'); setTimeout(() => { log.info('two'); setTimeout(() => log.info('three'), 5); }, 5);`;
    const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(result.stderr.trim().split('\n').map((line) => line.replace(/^\S+ /, ''))).toEqual(['info one', 'info two', 'info three']);
  });
});
