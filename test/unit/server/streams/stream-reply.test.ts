import { QueueBudget } from '../../../../src/server/guards/queue-budget';
import { SharedBlobs } from '../../../../src/server/streams/stream-reply';
import { createWorkPool } from '../../../../src/server/guards/work-pool';

// The store load behind a large image reply is expensive work: it runs in the pool in its
// client's turn, shared by every reply of the image, and a refused load is a 503 that leaves the
// queued-bytes budget as it was (docs/limits-and-load.md "Expensive requests").

describe('SharedBlobs with the work pool', () => {
  const image = Buffer.alloc(2 * 1024 * 1024, 7);

  it('When the pool has room, then concurrent replies of one image share one load, run in the pool', async () => {
    const pool = createWorkPool();
    const clients: string[] = [];
    let loads = 0;
    const blobs = new SharedBlobs(
      async () => {
        loads += 1;
        return image;
      },
      new QueueBudget(8 * 1024 * 1024),
      undefined,
      (client, load) => {
        clients.push(client);
        return pool.run(client, load);
      },
    );
    const leases = await Promise.all([blobs.acquire('k', image.length, 'a'), blobs.acquire('k', image.length, 'b')]);
    expect(leases.every((lease) => lease?.bytes === image)).toBe(true);
    expect(loads).toBe(1);
    expect(clients).toEqual(['a']);
    for (const lease of leases) lease?.release();
  });

  it('When the pool refuses the load, then the reply is refused with 503 and the budget is whole again', async () => {
    const pool = createWorkPool({ concurrency: 1, maxQueued: 0 });
    void pool.run('history', () => new Promise<void>(() => undefined));
    const budget = new QueueBudget(4 * 1024 * 1024);
    const blobs = new SharedBlobs(
      async () => image,
      budget,
      undefined,
      (client, load) => pool.run(client, load),
    );
    await expect(blobs.acquire('k', image.length, 'a')).rejects.toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
    expect(budget.hasRoomFor(4 * 1024 * 1024)).toBe(true);
  });
});
