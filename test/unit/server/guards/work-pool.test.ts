import { createWorkPool } from '../../../../src/server/guards/work-pool';

// The pool of expensive answers: bounded, fair between clients, 503 past its queue.

function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('createWorkPool', () => {
  it('When more jobs come than slots, then only `concurrency` run at once and the rest wait their turn', async () => {
    const pool = createWorkPool({ concurrency: 2 });
    const gates = [gate(), gate(), gate()];
    const started: number[] = [];
    const jobs = gates.map((g, index) =>
      pool.run(`c${index}`, async () => {
        started.push(index);
        await g.promise;
        return index;
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1]);
    gates[0].open();
    expect(await jobs[0]).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 2]);
    gates[1].open();
    gates[2].open();
    expect(await Promise.all(jobs)).toEqual([0, 1, 2]);
  });

  it('When one client queues many jobs and another one, then the other is served before the first one’s second job', async () => {
    const pool = createWorkPool({ concurrency: 1, maxQueuedPerClient: 10 });
    const order: string[] = [];
    const hold = gate();
    const first = pool.run('greedy', () => hold.promise);
    const greedy = [1, 2, 3].map((n) => pool.run('greedy', async () => void order.push(`greedy${n}`)));
    const polite = pool.run('polite', async () => void order.push('polite'));
    hold.open();
    await Promise.all([first, ...greedy, polite]);
    expect(order).toEqual(['greedy1', 'polite', 'greedy2', 'greedy3']);
  });

  it('When the queue is full, then the next job is refused with 503 and Retry-After', async () => {
    const pool = createWorkPool({ concurrency: 1, maxQueued: 1, maxQueuedPerClient: 1, floodRefusalDelayMs: 0 });
    const hold = gate();
    const running = pool.run('a', () => hold.promise);
    const waiting = pool.run('b', async () => 'b');
    await expect(pool.run('c', async () => 'c')).rejects.toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
    await expect(pool.run('b', async () => 'b again')).rejects.toMatchObject({ status: 503 });
    hold.open();
    await running;
    expect(await waiting).toBe('b');
  });

  it('When a client asks again while its own queue is full, then its 503 comes only after floodRefusalDelayMs; another client is told at once', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const pool = createWorkPool({ concurrency: 1, maxQueued: 1, maxQueuedPerClient: 1, floodRefusalDelayMs: 250 });
      const hold = gate();
      const running = pool.run('a', () => hold.promise);
      const waiting = pool.run('flood', async () => 'first');
      let refused = false;
      const again = pool
        .run('flood', async () => 'again')
        .catch((error: unknown) => {
          refused = true;
          throw error;
        });
      // The global queue is full too: a newcomer hears so at once.
      await expect(pool.run('newcomer', async () => 'n')).rejects.toMatchObject({ status: 503 });
      await jest.advanceTimersByTimeAsync(249);
      expect(refused).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      await expect(again).rejects.toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
      hold.open();
      await running;
      expect(await waiting).toBe('first');
    } finally {
      jest.useRealTimers();
    }
  });

  it('When a job waits longer than maxWaitMs, then it is refused with 503, never runs and leaves its place in the queue', async () => {
    const pool = createWorkPool({ concurrency: 1, maxQueued: 1, maxWaitMs: 200 });
    const hold = gate();
    const running = pool.run('a', () => hold.promise);
    let ran = false;
    await expect(pool.run('b', async () => void (ran = true))).rejects.toMatchObject({ status: 503 });
    const next = pool.run('c', async () => 'c');
    hold.open();
    await running;
    expect(await next).toBe('c');
    expect(ran).toBe(false);
  });

  it('When the client of a waiting job goes away, then the job is dropped', async () => {
    const pool = createWorkPool({ concurrency: 1, maxQueued: 1 });
    const hold = gate();
    const running = pool.run('a', () => hold.promise);
    const gone = new AbortController();
    const waiting = pool.run(
      'b',
      async () => 'ran',
      () => gone.signal,
    );
    gone.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    // Its place in the queue is free again.
    const next = pool.run('c', async () => 'c');
    hold.open();
    await running;
    expect(await next).toBe('c');
  });
});
