import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { openDatabase } from '../../../src/store/sqlite/database';
import { createImageStore } from '../../../src/store/sqlite/images';
import { peakDuring, pipelineWithoutReading, residentBytes, type Attack } from '../../helpers/attackers';
import { startServeProcess, stopServeProcess, type ServeProcess } from '../../helpers/serve-process';
import { makeTempDir } from '../../helpers/temp-dir';
import { PNG_HEAD } from '../../helpers/images';

// The real `svc serve` process under the resource attacks of docs/security.md, its memory read
// from /proc/<pid>/status: growth must stay within limits.maxQueuedBytes (64 MiB) plus a generous
// 128 MiB (a process busy answering a flood keeps garbage around for a while, and this machine
// is shared: samples of the same run ranged from 5 to 149 MiB; bench/attack-memory.bench.js
// holds the strict goal, budget + 64 MiB, on a pinned CPU) whether 10 or 6 times as many attack,
// and everyone else must still be answered during the attack. (A difference between the two
// runs is not asserted: on a shared machine GC timing alone moved it by 100 MiB.) Before the fix, 60
// pipelining non-readers added 555 MiB in 20 s with /v1/status unanswered, and 50 paused cover
// readers 3.7 GiB (docs/security.md).

const MiB = 1024 * 1024;
const BOUND = 64 * MiB + 128 * MiB;
const ATTACK_MS = 3000;

describe('svc serve under memory attacks', () => {
  jest.setTimeout(60_000);
  const temp = makeTempDir();
  const dbFile = path.join(temp.dir, 'svc.db');
  let coverKey = '';
  let serve: ServeProcess;

  beforeAll(async () => {
    const db = openDatabase(dbFile);
    coverKey = (await createImageStore(db, { maxTotalBytes: 1 << 30 }).put(Buffer.concat([PNG_HEAD, randomBytes(9_900_000)]))).key;
    db.close();
    serve = await startServeProcess(['--port', '0', '--db', dbFile, '--offline']);
  });
  afterAll(async () => {
    await stopServeProcess(serve);
    temp.cleanup();
  });

  async function growthUnder(start: () => Attack): Promise<number> {
    const idle = residentBytes(serve.child.pid ?? 0);
    const attack = start();
    try {
      const peak = await peakDuring(serve.child.pid ?? 0, ATTACK_MS);
      // Everyone else is still served during the attack (before the fix: no answer within 10 s).
      const status = await fetch(`${serve.url}/v1/status`, { signal: AbortSignal.timeout(5000) }).then(
        (res) => res.status,
        (error: Error) => error.name,
      );
      expect(status).toBe(200);
      return peak - idle;
    } finally {
      await attack.stop();
    }
  }

  it('When 10, then 60 connections pipeline requests without reading, then growth stays within the budget and a margin', async () => {
    const few = await growthUnder(() => pipelineWithoutReading(serve.url, 10, '/v1/status'));
    const many = await growthUnder(() => pipelineWithoutReading(serve.url, 60, '/v1/status'));
    expect([few, many].map((growth) => growth < BOUND)).toEqual([true, true]);
  });

  it('When 10, then 50 readers ask 8 times each for a 9.9 MB cover and never read, then growth stays within the budget and a margin', async () => {
    const few = await growthUnder(() => pipelineWithoutReading(serve.url, 10, `/cover/${coverKey}`, true));
    const many = await growthUnder(() => pipelineWithoutReading(serve.url, 50, `/cover/${coverKey}`, true));
    expect([few, many].map((growth) => growth < BOUND)).toEqual([true, true]);
  });
});
