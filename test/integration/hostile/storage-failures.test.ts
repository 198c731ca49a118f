import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { postJson, request } from '../../helpers/http';
import { reportSkip } from '../../helpers/peers';
import { makeTempDir } from '../../helpers/temp-dir';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/decisions.md "Hostile clients and browsers": disk full or a read-only file answers 503
// {"error":"Database unavailable"}, logs one line per kind per minute (no stack per request),
// and /v1/status says "database":"unavailable" until a write succeeds again. The database lives
// on a real 1 MiB tmpfs, filled by real submissions. A file that turns read-only under an open
// connection cannot be made here (root writes through its open descriptor), so
// test/unit/store/health.test.ts covers SQLITE_READONLY and the other kinds with injected errors,
// and the disk-full rules too where mounting is not allowed. (A remount read-only is refused while
// svc holds the file open for writing: a full disk is what "unwritable later" looks like here.)

function tryMount(dir: string, size: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const temp = makeTempDir('svc-tmpfs-');
const mounted = tryMount(temp.dir, '1m');
const describeOnTmpfs = mounted ? describe : describe.skip;
if (!mounted) reportSkip(['skipped: mounting a tmpfs needs root (mount -t tmpfs): "storage failures on a small tmpfs"']);

afterAll(() => {
  if (mounted) execFileSync('umount', [temp.dir]);
  temp.cleanup();
});

describeOnTmpfs('storage failures on a small tmpfs', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ dbFile: path.join(temp.dir, 'svc.db'), config: { maxFieldLength: 1000 } });
  });
  afterAll(() => t.close());

  const bigTrack = (i: number) => ({
    artist: `A${i}`,
    title: 'T',
    ...Object.fromEntries(Array.from({ length: 150 }, (_, f) => [`x${f}`, `${i}-${f}-`.padEnd(1000, 'z')])),
  });
  const status = async () => (await request(`${t.url}/v1/status`)).json;

  it('When the disk fills up, then 503 "Database unavailable", /v1/status says so, and one log line, no stacks', async () => {
    expect(await status()).toMatchObject({ database: 'ok' });
    let answer = await postJson(`${t.url}/v1/remoteinput`, bigTrack(0));
    let stored = 0;
    while (answer.status === 200 && stored < 100) {
      stored += 1;
      answer = await postJson(`${t.url}/v1/remoteinput`, bigTrack(stored));
    }
    expect(stored).toBeGreaterThan(0);
    expect([answer.status, answer.json]).toEqual([503, { error: 'Database unavailable' }]);
    for (let i = 0; i < 5; i += 1) expect((await postJson(`${t.url}/v1/remoteinput`, bigTrack(1000 + i))).status).toBe(503);
    expect(await status()).toEqual(expect.objectContaining({ status: 'ok', database: 'unavailable' }));
    // A load balancer takes it out of the rotation (docs/several-instances.md "Health checks"); it is still live.
    const ready = await request(`${t.url}/v1/health/ready`);
    expect([ready.status, ready.json, ready.headers.get('retry-after')]).toEqual([503, { status: 'database unavailable' }, '1']);
    expect((await request(`${t.url}/v1/health/live`)).status).toBe(200);
    // The current track is still served from memory.
    expect((await request(`${t.url}/v1/last`)).status).toBe(200);
    const failures = t.logs.filter((line) => line.includes('database unavailable'));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toContain('(SQLITE_FULL)');
    // What and where (docs/running.md "When the database fails"): the file and what to do.
    expect(failures[0]).toContain(`(database ${path.join(temp.dir, 'svc.db')}: free space on its file system)`);
    expect(t.logs.join('\n')).not.toMatch(/^\s+at /m);
  });

  it('When space is freed, then the next write succeeds and /v1/status is ok again', async () => {
    execFileSync('mount', ['-o', 'remount,size=16m', temp.dir]);
    const answer = await postJson(`${t.url}/v1/remoteinput`, { artist: 'After', title: 'Space' });
    expect(answer.status).toBe(200);
    expect(await status()).toMatchObject({ database: 'ok' });
    const ready = await request(`${t.url}/v1/health/ready`);
    expect([ready.status, ready.json]).toEqual([200, { status: 'ok' }]);
  });
});
