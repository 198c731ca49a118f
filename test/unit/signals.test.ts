import { SharedFlights } from '../../src/signals';

/** Work that resolves only when told to, and reports whether its signal aborted. */
function controllableWork() {
  const started: AbortSignal[] = [];
  let finish: (value: string) => void = () => undefined;
  const work = (signal: AbortSignal) =>
    new Promise<string>((resolve, reject) => {
      started.push(signal);
      finish = resolve;
      signal.addEventListener('abort', () => reject(signal.reason));
    });
  return { work, started, finish: (value: string) => finish(value) };
}

describe('SharedFlights', () => {
  it('When callers ask for the same key at once, then the work runs once and every caller gets its result', async () => {
    const flights = new SharedFlights<string>();
    const { work, started, finish } = controllableWork();
    const answers = Promise.all([1, 2, 3].map(() => flights.run('cover', work, new AbortController().signal)));
    expect(started).toHaveLength(1);
    finish('bytes');
    expect(await answers).toEqual(['bytes', 'bytes', 'bytes']);
    // A finished flight is gone: the next caller starts the work afresh.
    void flights.run('cover', work).catch(() => undefined);
    expect(started).toHaveLength(2);
  });

  it('When one of two callers gives up, then the work goes on for the other; when the last gives up, it is cancelled', async () => {
    const flights = new SharedFlights<string>();
    const { work, started } = controllableWork();
    const first = new AbortController();
    const second = new AbortController();
    const firstAnswer = flights.run('cover', work, first.signal);
    const secondAnswer = flights.run('cover', work, second.signal);
    first.abort(new Error('first gave up'));
    await expect(firstAnswer).rejects.toThrow('first gave up');
    expect(started[0]?.aborted).toBe(false);
    second.abort(new Error('second gave up'));
    await expect(secondAnswer).rejects.toThrow('second gave up');
    expect(started[0]?.aborted).toBe(true);
    // A new caller after everyone left starts afresh.
    void flights.run('cover', work).catch(() => undefined);
    expect(started).toHaveLength(2);
  });
});
