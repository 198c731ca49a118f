import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describeWithPeers } from '../helpers/peers';
import { makeTempDir } from '../helpers/temp-dir';

// docs/running.md "A system service": the shipped units pass `systemd-analyze verify` without a
// warning, and the service's hardening scores at most 4.0 ("OK") in `systemd-analyze security
// --offline=yes`. Both run on copies in a scratch root: verify looks for ExecStart's program and
// the units it is ordered after under --root, so the host's units are linked in and a copy of
// bin/svc.js stands at /usr/local/bin/svc, where `npm install -g` puts it.

const ROOT = path.join(__dirname, '..', '..');
const EXAMPLES = path.join(ROOT, 'examples', 'systemd');
const SYSTEM_UNITS = ['svc.service', 'svc-backup.service', 'svc-backup.timer'];

function scratchRoot(dir: string): void {
  fs.mkdirSync(path.join(dir, 'usr/local/bin'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'etc/systemd/system'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'usr/lib/systemd'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'bin', 'svc.js'), path.join(dir, 'usr/local/bin/svc'));
  fs.chmodSync(path.join(dir, 'usr/local/bin/svc'), 0o755);
  fs.symlinkSync('/usr/lib/systemd/system', path.join(dir, 'usr/lib/systemd/system'));
  for (const unit of SYSTEM_UNITS) fs.copyFileSync(path.join(EXAMPLES, unit), path.join(dir, 'etc/systemd/system', unit));
}

/** systemd-analyze's complaints about our own units (the host's linked units may draw their own lines). */
function ownComplaints(stderr: string): string[] {
  return stderr.split('\n').filter((line) => /svc(-backup)?\.(service|timer)/.test(line));
}

describeWithPeers(['systemd-analyze'], 'the shipped systemd units', () => {
  const temp = makeTempDir('svc-systemd-');
  beforeAll(() => scratchRoot(temp.dir));
  afterAll(() => temp.cleanup());

  it.each(SYSTEM_UNITS)('When %s is verified, then systemd-analyze verify exits 0 and says nothing about it', (unit) => {
    const run = spawnSync('systemd-analyze', ['verify', `--root=${temp.dir}`, unit], { encoding: 'utf8', timeout: 60_000 });
    expect(ownComplaints(run.stderr)).toEqual([]);
    expect(run.status).toBe(0);
  });

  it('When the desktop user unit is verified, then it has no unknown key or bad value', () => {
    const dir = path.join(temp.dir, 'user');
    fs.mkdirSync(dir);
    fs.copyFileSync(path.join(EXAMPLES, 'user', 'svc.service'), path.join(dir, 'svc.service'));
    const run = spawnSync('systemd-analyze', ['verify', '--user', path.join(dir, 'svc.service')], { encoding: 'utf8', timeout: 60_000 });
    // %h/svc/bin/svc.js is not there, and no user manager runs here: only the unit's own syntax counts.
    expect(ownComplaints(run.stderr).filter((line) => /Unknown|Failed to parse|Invalid|ignoring/i.test(line))).toEqual([]);
  });

  it('When the system unit is scored offline, then its exposure is at most 4.0 ("OK")', () => {
    const run = spawnSync('systemd-analyze', ['security', '--offline=yes', `--root=${temp.dir}`, '--threshold=40', 'svc.service'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    const score = /Overall exposure level for svc\.service: (\d+\.\d)/.exec(run.stdout)?.[1];
    expect(score).toBeDefined();
    expect(Number(score)).toBeLessThanOrEqual(4.0);
    // --threshold=40: a score above 4.0 would also be a failing exit.
    expect(run.status).toBe(0);
  });

  it('When the unit reads the secret, then it is a credential handed to svc through secretFile, not an environment value', () => {
    const unit = fs.readFileSync(path.join(EXAMPLES, 'svc.service'), 'utf8');
    expect(unit).toMatch(/^LoadCredential=secret:\/etc\/svc\/secret$/m);
    expect(unit).toMatch(/^Environment=SVC_SECRET_FILE=%d\/secret$/m);
    expect(unit).not.toMatch(/^Environment=SVC_SECRET=/m);
    expect(unit).toMatch(/^After=.*icecast2\.service.*postgresql\.service/m);
    expect(unit).toMatch(/^User=svc$/m);
  });
});
