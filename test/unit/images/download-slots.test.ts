import { HostSlots, crawling } from '../../../src/images/download-slots';

// The rules that keep a slow host from holding every cover download slot
// (docs/limits-and-load.md "Cover downloads").

describe('crawling', () => {
  const rule = { graceMs: 1000, minBytesPerSecond: 8 * 1024 };
  it.each([
    [500, 0, false],
    [1000, 0, true],
    [1000, 8 * 1024, false],
    [2000, 10 * 1024, true],
    [2000, 16 * 1024, false],
  ])('held %i ms with %i bytes: crawling %s', (heldMs, bytes, expected) => {
    expect(crawling(heldMs, bytes, rule)).toBe(expected);
  });
});

describe('HostSlots', () => {
  it('When a host has all its slots, then its next download waits while another host goes ahead; a released slot lets it in', async () => {
    const slots = new HostSlots(2);
    const signal = new AbortController().signal;
    const first = await slots.acquire('slow:80', signal);
    await slots.acquire('slow:80', signal);
    let third = false;
    const waiting = slots.acquire('slow:80', signal).then((release) => {
      third = true;
      return release;
    });
    await slots.acquire('fast:80', signal);
    await new Promise((resolve) => setImmediate(resolve));
    expect(third).toBe(false);
    first();
    (await waiting)();
    expect(third).toBe(true);
  });

  it('When a waiting download gives up, then it takes no slot', async () => {
    const slots = new HostSlots(1);
    const held = await slots.acquire('h', new AbortController().signal);
    const giveUp = new AbortController();
    const waiting = slots.acquire('h', giveUp.signal);
    giveUp.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    held();
    const again = await slots.acquire('h', new AbortController().signal);
    again();
  });
});
