import fs from 'node:fs';
import path from 'node:path';
import { unusedPort } from '../../cli/cli-process';
import { startNginxFront, type NginxFront } from '../../helpers/nginx';
import { describeWithPeers } from '../../helpers/peers';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres';
import { runCli } from '../../helpers/run-cli';
import { startServeProcess, type ServeProcess } from '../../helpers/serve-process';
import { makeTempDir } from '../../helpers/temp-dir';

// Retries never double a play (docs/limits-and-load.md "Idempotency and retries"): before, killing one
// instance behind nginx made 5 writes fail with 502, 3 of which had been stored, and svc submit
// did not retry. Now svc submit sends one Idempotency-Key per submission and retries the 502 on
// the instance nginx moves on to. A short processing budget lets a key left unanswered by the
// killed instance be taken over within seconds.

const SUBMISSIONS = 150;

describeWithPeers(['nginx', 'postgresql'], 'svc submit through nginx while an instance is killed', () => {
  jest.setTimeout(120_000);
  let database: TestDatabase;
  let temp: ReturnType<typeof makeTempDir>;
  let instances: ServeProcess[];
  let front: NginxFront;

  beforeAll(async () => {
    database = await createTestDatabase();
    temp = makeTempDir();
    fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ processingTimeoutSeconds: 3, enrichment: { deadlineSeconds: 1 } }));
    instances = await Promise.all([1, 2].map(() => startServeProcess(['--port', '0', '--db', database.url, '--offline'], {}, temp.dir)));
    fs.mkdirSync(path.join(temp.dir, 'nginx'));
    front = startNginxFront(
      path.join(temp.dir, 'nginx'),
      await unusedPort(),
      instances.map((instance) => new URL(instance.url).host),
    );
  });
  afterAll(async () => {
    await front?.stop();
    for (const instance of instances ?? []) instance.child.kill('SIGKILL');
    await Promise.all((instances ?? []).map((instance) => instance.exited));
    await database?.drop();
    temp?.cleanup();
  });

  it('When one of two instances is killed mid-run, then every submission is answered and stored exactly once', async () => {
    const input = Array.from({ length: SUBMISSIONS }, (_, index) => JSON.stringify({ artist: 'Retry', title: `R${index}` })).join('\n');
    const kill = setTimeout(() => instances[0]?.child.kill('SIGKILL'), 500);
    const result = await runCli(['submit', '-', '--url', front.url, '--timeout', '30', '--json'], { input, timeoutMs: 100_000 });
    clearTimeout(kill);
    // Killed during the run, not after it.
    expect(instances[0]?.child.signalCode).toBe('SIGKILL');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(SUBMISSIONS);
    const counts = await database.query<{ title: string; n: string }>(`SELECT metadata->>'title' AS title, count(*) AS n FROM tracks GROUP BY 1`);
    expect(counts.filter((row) => row.n !== '1')).toEqual([]);
    expect(counts).toHaveLength(SUBMISSIONS);
  });
});
