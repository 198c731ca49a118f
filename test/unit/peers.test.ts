import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findProgram, skipLine, underCi } from '../helpers/peers';
import { makeTempDir } from '../helpers/temp-dir';

// `npm test` on a plain machine (README.md "Development"): a test whose outside program is missing
// is skipped with one line naming the program and its Debian package, the closing line counts the
// skips, and under CI=true the same run fails naming them. The runner (test/run-tests.js) is run
// on a fixture with a PATH that holds only node.

const ROOT = path.join(__dirname, '..', '..');

function runOnFixture(env: Record<string, string>, fixture = 'needs-peers'): { status: number | null; stdout: string } {
  const bin = makeTempDir('svc-minimal-path-');
  try {
    fs.symlinkSync(process.execPath, path.join(bin.dir, 'node'));
    const run = spawnSync(process.execPath, ['test/run-tests.js', '--maxWorkers=1', '--testMatch', `**/fixtures/peers/${fixture}.fixture.ts`], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { HOME: process.env.HOME ?? '/tmp', PATH: bin.dir, SVC_TEST_ADMIN_DIRS: '', SVC_TEST_MQTT_URL: 'mqtt://127.0.0.1:9', ...env },
      timeout: 120_000,
    });
    return { status: run.status, stdout: run.stdout };
  } finally {
    bin.cleanup();
  }
}

describe('npm test with the outside programs missing', () => {
  jest.setTimeout(180_000);

  test('When sox, opusenc and the broker are missing, then their suites are skipped with one line each, and the run passes counting them', () => {
    const run = runOnFixture({ CI: '' });
    const skips = run.stdout.split('\n').filter((line) => line.startsWith('skipped: '));
    expect(skips).toEqual([
      'skipped: Mosquitto on 127.0.0.1:9 is missing (Debian package mosquitto): "a file that publishes"',
      'skipped: opusenc is missing (Debian package opus-tools): "a suite that makes Ogg files"',
      'skipped: sox is missing (Debian package sox): "a suite that makes Ogg files"',
    ]);
    expect(run.stdout).toContain('npm run setup-peers');
    expect(run.stdout.trimEnd().split('\n').pop()).toBe('1 passed, 0 failed, 2 skipped');
    expect(run.status).toBe(0);
  });

  test('When CI=true, then the same run fails, naming each missing program and its package', () => {
    const run = runOnFixture({ CI: 'true' });
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/sox is missing \(Debian package sox\)/);
    expect(run.stdout).toMatch(/opusenc is missing \(Debian package opus-tools\)/);
    expect(run.stdout).toMatch(/Mosquitto on 127\.0\.0\.1:9 is missing \(Debian package mosquitto\)/);
    expect(run.stdout.trimEnd().split('\n').pop()).toBe('1 passed, 2 failed, 2 skipped');
  });
});

describe('the closing line', () => {
  jest.setTimeout(120_000);

  test('When a test fails with an error that refers to itself, then the counts are still right', () => {
    const run = runOnFixture({ CI: '' }, 'circular-error');
    expect(run.stdout.trimEnd().split('\n').pop()).toBe('1 passed, 1 failed, 0 skipped');
    expect(run.status).toBe(1);
  });
});

describe('finding a program', () => {
  test('When a program is on PATH, then its path is found; when not on PATH nor in the admin folders, then none', () => {
    const bin = makeTempDir('svc-peer-bin-');
    try {
      const program = path.join(bin.dir, 'fake-encoder');
      fs.writeFileSync(program, '#!/bin/sh\n', { mode: 0o755 });
      fs.writeFileSync(path.join(bin.dir, 'not-executable'), '', { mode: 0o644 });
      expect(findProgram('fake-encoder', bin.dir, [])).toBe(program);
      expect(findProgram('not-executable', bin.dir, [])).toBeUndefined();
      expect(findProgram('fake-encoder', '/nonexistent', [])).toBeUndefined();
      expect(findProgram('fake-encoder', '', [bin.dir])).toBe(program);
    } finally {
      bin.cleanup();
    }
  });

  test('When CI is set to a true value, then a skip is a failure', () => {
    expect(underCi({ CI: 'true' })).toBe(true);
    expect(underCi({ CI: '1' })).toBe(true);
    expect(underCi({ CI: 'false' })).toBe(false);
    expect(underCi({})).toBe(false);
    expect(skipLine({ program: 'opusenc', debianPackage: 'opus-tools' }, 'suite')).toBe('skipped: opusenc is missing (Debian package opus-tools): "suite"');
  });
});
