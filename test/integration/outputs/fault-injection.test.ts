import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { eventually } from '../../helpers/eventually';
import { asObject, postJson } from '../../helpers/http';
import { createTestDatabase, postgresForPart, type TestDatabase } from '../../helpers/postgres';
import { startReceiver, type Receiver } from '../../helpers/receiver';
import { startServeProcess, type ServeProcess } from '../../helpers/serve-process';
import { makeTempDir } from '../../helpers/temp-dir';

// docs/decisions.md "Delivery promises": kill -9 at every step of a submission (test/helpers/
// fault-injection.js: right after the track row, after the commit, before the answer), on SQLite
// and PostgreSQL, then a restart: every stored track reaches every output exactly once, in dbid
// order. Real `svc serve` processes; two webhook outputs on one local receiver.

const SIGNING = `whsec_${randomBytes(24).toString('base64')}`;
const PRELOAD = path.join(__dirname, '..', '..', 'helpers', 'fault-injection.js');
const STEPS = ['track-row', 'after-commit', 'before-answer'] as const;
const OUTPUTS = ['a', 'b'];

interface Outcome {
  backend: string;
  step: string;
  stored: number[];
  /** The stored titles, oldest first: the killed submission's is there once its record committed. */
  titles: string[];
  /** What the killed instance said on stderr (test/helpers/fault-injection.js names the step it died at). */
  killedSaid: string;
  delivered: Record<string, number[]>;
}
const table: Outcome[] = [];

async function runWithFault(backend: 'sqlite' | 'postgres', step: (typeof STEPS)[number], receiver: Receiver): Promise<Outcome> {
  const temp = makeTempDir();
  let database: TestDatabase | undefined;
  let instance: ServeProcess | undefined;
  try {
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    const db = database?.url ?? path.join(temp.dir, 'svc.db');
    const run = randomBytes(3).toString('hex');
    // The enrichment deadline bounds how long a record's messages are held (1 s + 1 s here).
    const outputs = OUTPUTS.map((name) => ({ name, type: 'webhook', url: `${receiver.url}/${run}/${name}`, secret: SIGNING }));
    fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ enrichment: { deadlineSeconds: 1 }, outputs }));
    const args = ['--port', '0', '--db', db, '--offline'];
    instance = await startServeProcess(args, { NODE_OPTIONS: `--require ${PRELOAD}`, SVC_TEST_FAULT: `${step}:2` }, temp.dir);
    const submit = (url: string, title: string) => postJson(`${url}/v1/remoteinput`, { artist: 'Fault', title });
    expect((await submit(instance.url, 'one')).status).toBe(200);
    // Its messages delivered and finished first: a kill in the middle of an attempt is sent again
    // with the same webhook-id once its claim has expired (30 s; docs/outputs.md "Delivery").
    const first = instance;
    await eventually(
      async () => ((await (await fetch(`${first.url}/v1/outputs`)).json()) as { outputs: { pending: number; lastSuccess: unknown }[] }).outputs,
      (rows) => rows.every((row) => row.pending === 0 && row.lastSuccess !== null),
    );
    // The second submission dies at the step: no answer at all.
    await expect(submit(instance.url, 'two')).rejects.toThrow();
    await instance.exited;
    const killedSaid = first.stderr();
    instance = await startServeProcess(args, {}, temp.dir);
    const last = Number(asObject((await submit(instance.url, 'three')).json).dbid);
    const history = asObject(await (await fetch(`${instance.url}/v1/history?limit=100`)).json());
    const records = (history.tracks as { dbid: number; title: string }[]).sort((x, y) => x.dbid - y.dbid);
    const stored = records.map((record) => record.dbid);
    // One message per record and output, told apart by its webhook-id (a retry repeats the id).
    const deliveredTo = (name: string) => {
      const byId = new Map<string, number>();
      for (const one of receiver.received.filter((request) => request.path === `/${run}/${name}`))
        byId.set(String(one.headers['webhook-id']), (JSON.parse(one.body.toString('utf8')) as { data: { dbid: number } }).data.dbid);
      return [...byId.values()];
    };
    // Messages keep dbid order per output: once the last one is in, every earlier one is (or never will be).
    await eventually(
      async () => OUTPUTS.map(deliveredTo),
      (lists) => lists.every((list) => list.includes(last)),
      20_000,
    );
    return {
      backend,
      step,
      stored,
      titles: records.map((record) => record.title),
      killedSaid,
      delivered: Object.fromEntries(OUTPUTS.map((name) => [name, deliveredTo(name)])),
    };
  } finally {
    if (instance && instance.child.exitCode === null) {
      instance.child.kill('SIGKILL');
      await instance.exited;
    }
    await database?.drop();
    temp.cleanup();
  }
}

describe('kill -9 at every step of a submission', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    // The closing note's table (docs/decisions.md "Delivery promises").
    if (table.length > 0) {
      const rows = table.map(
        (row) =>
          `${row.backend.padEnd(9)} ${row.step.padEnd(14)} stored ${JSON.stringify(row.stored).padEnd(10)} ${OUTPUTS.map((name) => `${name}: ${JSON.stringify(row.delivered[name])}`).join('  ')}`,
      );
      process.stdout.write(`\nfault injection (backend, step, stored dbids, delivered per output):\n${rows.join('\n')}\n`);
    }
  });

  const backends = postgresForPart('kill -9 at every step of a submission, on PostgreSQL') ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);
  for (const backend of backends) {
    for (const step of STEPS) {
      it(`When ${backend} is killed at "${step}", then every stored track reaches every output exactly once, in dbid order`, async () => {
        const outcome = await runWithFault(backend, step, receiver);
        table.push(outcome);
        // It died where the test says, at the second submission, and nowhere before.
        expect(outcome.killedSaid).toContain(`fault-injection: kill -9 at ${step} #2\n`);
        // Killed before its COMMIT, the second track is not stored; after it, it is.
        expect(outcome.titles).toEqual(step === 'track-row' ? ['one', 'three'] : ['one', 'two', 'three']);
        for (const name of OUTPUTS) expect(outcome.delivered[name]).toEqual(outcome.stored);
      }, 60_000);
    }
  }
});

describe('a retry after kill -9 with the same Idempotency-Key', () => {
  it.each(['after-commit', 'before-answer'])(
    'When svc dies at "%s" and the client retries on a restarted svc, then it is answered with the stored dbid, stored once',
    async (step) => {
      const temp = makeTempDir();
      let instance: ServeProcess | undefined;
      try {
        const args = ['--port', '0', '--db', path.join(temp.dir, 'svc.db'), '--offline'];
        instance = await startServeProcess(args, { NODE_OPTIONS: `--require ${PRELOAD}`, SVC_TEST_FAULT: step }, temp.dir);
        const headers = { 'Idempotency-Key': `retry-${step}` };
        const fields = { artist: 'Once', title: 'Only' };
        await expect(postJson(`${instance.url}/v1/remoteinput`, fields, headers)).rejects.toThrow();
        await instance.exited;
        instance = await startServeProcess(args, {}, temp.dir);
        const retry = await postJson(`${instance.url}/v1/remoteinput`, fields, headers);
        expect(retry.status).toBe(200);
        const history = asObject(await (await fetch(`${instance.url}/v1/history`)).json()).tracks as { dbid: number }[];
        expect(history.map((record) => record.dbid)).toEqual([asObject(retry.json).dbid]);
        expect(asObject(retry.json).processed_metadata).toMatchObject(fields);
      } finally {
        if (instance && instance.child.exitCode === null) {
          instance.child.kill('SIGKILL');
          await instance.exited;
        }
        temp.cleanup();
      }
    },
  );
});
