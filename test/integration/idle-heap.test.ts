import v8 from 'node:v8';
import { until } from '../helpers/eventually';
import { openSse, type SseClient } from '../helpers/sse-client';
import { startTestServer, type TestServer } from '../helpers/test-server';

// The server gives back the young generation V8 grew for a burst once it has been quiet, and keeps
// it while an audience is connected (src/server/guards/idle-heap.ts; the rule itself:
// test/unit/server/guards/idle-heap.test.ts). The server runs in this process, so V8's young generation
// is the one it collects; the burst is made here, as a burst of requests would make it.

const MiB = 1024 * 1024;

function youngGenerationMiB(): number {
  const space = v8.getHeapSpaceStatistics().find((each) => each.space_name === 'new_space');
  if (!space) throw new Error('V8 reports no new_space');
  return space.space_size / MiB;
}

/** Keeps a moving window of objects alive across collections, as requests in flight do: V8 grows its young generation for it. */
function burst(): void {
  const window: object[][] = [];
  for (let round = 0; round < 4000; round++) {
    window.push(Array.from({ length: 1000 }, (_, index) => ({ round, index })));
    if (window.length > 40) window.shift();
  }
}

describe('the young generation after a burst', () => {
  let server: TestServer | undefined;
  const readers: SseClient[] = [];

  afterEach(async () => {
    for (const reader of readers.splice(0)) reader.close();
    await server?.close();
    server = undefined;
  });

  test('is given back once the server has been quiet (6 s, and up to two more tries 6 s apart)', async () => {
    server = await startTestServer();
    burst();
    const grown = youngGenerationMiB();
    expect(grown).toBeGreaterThanOrEqual(16);
    // Read every 250 ms: the reading allocates, and V8 shrinks only while little is allocated.
    await until(() => youngGenerationMiB() <= grown / 2, `the young generation (${grown} MiB) was given back`, 30_000, 250);
  }, 40_000);

  test('is kept while 100 readers are connected', async () => {
    // A short quiet time (the default is 6 s): the watcher says when it kept the young generation.
    const decisions: string[] = [];
    const started = await startTestServer({ idleHeap: { quietMs: 300, checkMs: 50, onDecision: (decision) => decisions.push(decision) } });
    server = started;
    readers.push(...(await Promise.all(Array.from({ length: 100 }, () => openSse(`${started.url}/v1/events`)))));
    burst();
    const grown = youngGenerationMiB();
    expect(grown).toBeGreaterThanOrEqual(16);
    await until(() => decisions.includes('kept for the audience'), 'the watcher kept the young generation for the audience', 20_000, 50);
    expect(decisions).not.toContain('collected');
    expect(youngGenerationMiB()).toBe(grown);
  }, 30_000);
});
