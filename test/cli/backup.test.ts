import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { asObject, postJson } from '../helpers/http';
import { runCli } from '../helpers/run-cli';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process';
import { makeTempDir } from '../helpers/temp-dir';

// docs/running.md "Backup": `svc backup` copies the database through SQLite's backup API while
// submissions arrive (about 100 a second here); the copy opens, passes integrity_check, holds
// every write acknowledged before the backup started, and is 0600 in a 0700 folder. `svc restore`
// is refused while a server has the database open, and brings the records back once it is stopped.

describe('svc backup and svc restore', () => {
  const temp = makeTempDir();
  let serve: ServeProcess | undefined;
  afterAll(async () => {
    if (serve && serve.child.exitCode === null) {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    temp.cleanup();
  });
  const dbFile = path.join(temp.dir, 'svc.db');

  it('When svc backup runs while about 100 submissions a second arrive, then the copy is whole, checked, 0600 in a 0700 folder and holds every acknowledged write', async () => {
    serve = await startServeProcess(['--port', '0', '--db', dbFile, '--offline']);
    const url = `${serve.url}/v1/remoteinput`;
    const acknowledged: number[] = [];
    const failures: string[] = [];
    let sent = 0;
    // A steady stream of submissions, one every 10 ms, for as long as the backup runs.
    const submitting = setInterval(() => {
      sent += 1;
      postJson(url, { artist: 'Load', title: `Track ${sent}` }).then(
        (answer) => {
          const dbid = asObject(answer.json).dbid;
          if (answer.status === 200 && typeof dbid === 'number') acknowledged.push(dbid);
          else failures.push(`${answer.status}`);
        },
        (error: unknown) => failures.push(String(error)),
      );
    }, 10);
    try {
      // Wait until writes are flowing, then note what was acknowledged when the backup starts.
      while (acknowledged.length < 50) await new Promise((resolve) => setImmediate(resolve));
      const before = [...acknowledged];
      const out = path.join(temp.dir, 'backups', 'during-load.db');
      const result = await runCli(['backup', '--db', dbFile, '--out', out], { timeoutMs: 60_000 });
      const during = acknowledged.length - before.length;
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(new RegExp(`^backup written: ${out.replace(/[.]/g, '\\.')} \\(integrity ok, \\d+ tracks, schema \\d+\\)\\n$`));
      expect(fs.statSync(out).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.dirname(out)).mode & 0o777).toBe(0o700);
      expect(fs.existsSync(`${out}.partial`)).toBe(false);
      const copy = new Database(out, { readonly: true, fileMustExist: true });
      try {
        expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
        const stored = new Set((copy.prepare('SELECT dbid FROM tracks').all() as { dbid: number }[]).map((row) => row.dbid));
        expect(before.filter((dbid) => !stored.has(dbid))).toEqual([]);
      } finally {
        copy.close();
      }
      // The writes went on while it copied.
      expect(during).toBeGreaterThan(0);
    } finally {
      clearInterval(submitting);
    }
    expect(failures).toEqual([]);
  });

  it('When svc restore runs while the server has the database open, then it is refused; stopped, the backup comes back', async () => {
    const backupFile = path.join(temp.dir, 'backups', 'during-load.db');
    const running = serve;
    if (!running) throw new Error('the first test starts the server');
    const refused = await runCli(['restore', '--db', dbFile, backupFile]);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toBe(`svc: ${dbFile} is in use (is svc serve running on it? stop it first: systemctl stop svc)\n`);
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    const backupTracks = countTracks(backupFile);
    expect(countTracks(dbFile)).toBeGreaterThan(backupTracks);
    const restored = await runCli(['restore', '--db', dbFile, backupFile]);
    expect(restored).toMatchObject({ code: 0, stderr: '' });
    expect(restored.stdout).toContain(`restored: ${dbFile} from ${backupFile} (integrity ok, ${backupTracks} tracks,`);
    expect(countTracks(dbFile)).toBe(backupTracks);
    expect(fs.statSync(dbFile).mode & 0o777).toBe(0o600);
  });

  it('When the database is PostgreSQL, then svc backup names the pg_dump line instead', async () => {
    const result = await runCli(['backup', '--db', 'postgres://svc@127.0.0.1:9/svc']);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain('back it up with pg_dump, e.g. (umask 077 && pg_dump --format=custom');
  });
});

function countTracks(file: string): number {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT count(*) AS count FROM tracks').get() as { count: number }).count;
  } finally {
    db.close();
  }
}
