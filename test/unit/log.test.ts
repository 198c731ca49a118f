import { spawnSync } from 'node:child_process';
import path from 'node:path';
import querystring from 'node:querystring';
import fc from 'fast-check';
import { createLogger, escapeForLog, redactSecretQuery } from '../../src/log';

const dist = path.join(__dirname, '..', '..', 'dist', 'log.js');

describe('redactSecretQuery', () => {
  it('replaces every secret query value and keeps the rest', () => {
    expect(redactSecretQuery('/v1/remoteinput?artist=A&secret=s3cret&title=T&SECRET=x')).toBe(
      '/v1/remoteinput?artist=A&secret=[redacted]&title=T&SECRET=[redacted]',
    );
    expect(redactSecretQuery('/v1/remoteinput?secret=')).toBe('/v1/remoteinput?secret=[redacted]');
    expect(redactSecretQuery('/v1/last')).toBe('/v1/last');
  });

  it('When the name of the secret is percent-encoded, in another case or repeated, then every value is still redacted', () => {
    // Koa's query parser (node:querystring) decodes %73ecret to `secret`, so it authenticates.
    expect(redactSecretQuery('/v1/remoteinput?%73ecret=s3cret&artist=A')).toBe('/v1/remoteinput?%73ecret=[redacted]&artist=A');
    expect(redactSecretQuery('/v1/remoteinput?secre%74=s3cret')).toBe('/v1/remoteinput?secre%74=[redacted]');
    expect(redactSecretQuery('/v1/remoteinput?%53%45%43%52%45%54=s3cret')).toBe('/v1/remoteinput?%53%45%43%52%45%54=[redacted]');
    expect(redactSecretQuery('/v1/remoteinput?secret=a&secret=b&Secret=c')).toBe('/v1/remoteinput?secret=[redacted]&secret=[redacted]&Secret=[redacted]');
    expect(redactSecretQuery('/v1/remoteinput?secret%00=s3cret&%E0%A4%A=x')).toBe('/v1/remoteinput?secret%00=[redacted]&%E0%A4%A=x');
  });

  it('When any query is generated, then no value of a parameter that querystring reads as `secret` survives', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string(), fc.string()), { maxLength: 5 }), fc.string({ minLength: 1 }), (pairs, secretValue) => {
        const value = `Redact-me-${secretValue.replace(/[&#]/g, '')}`;
        const all: [string, string][] = [...pairs, ['secret', value]];
        const url = `/v1/remoteinput?${all.map(([k, v]) => `${k === 'secret' ? '%73ecret' : encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`;
        const parsed = querystring.parse(url.slice(url.indexOf('?') + 1));
        expect(parsed.secret).toBeDefined();
        expect(redactSecretQuery(url)).not.toContain(`=${encodeURIComponent(value)}`);
      }),
    );
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
    expect(
      result.stderr
        .trim()
        .split('\n')
        .map((line) => line.replace(/^\S+ /, '')),
    ).toEqual(['info one', 'info two', 'info three']);
  });
});

// Round three, N9 (docs/security.md "Logs"): a field from outside forged lines and drove the terminal.
describe('escapeForLog', () => {
  it('When a message carries CR, LF, escapes, C1, U+2028 or a bidi override, then the line stays one line with them written as \\uXXXX', () => {
    const lines: string[] = [];
    createLogger((line) => lines.push(line)).warn('mount /live\r\n2026-01-01T00:00:00.000Z error forged \u001b[2J\u0085\u2028\u202e end');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('mount /live\\u000d\\u000a2026-01-01T00:00:00.000Z error forged \\u001b[2J\\u0085\\u2028\\u202e end');
  });

  it('When any string is escaped, then no control character, line break or bidi control is left', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        // eslint-disable-next-line no-control-regex -- control characters are what must not be left
        expect(escapeForLog(text)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
      }),
    );
  });
});
