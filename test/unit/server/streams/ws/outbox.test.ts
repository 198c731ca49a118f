import { socketQueuedBytes } from '../../../../../src/server/streams/ws/outbox';

// The per-socket count of queued bytes that decides 1013 (pushes only) and that a process-wide
// budget will wrap.

describe('socketQueuedBytes', () => {
  it('When pushes pile up past the bound, then the next one does not fit; replies never count against it', () => {
    const queued = socketQueuedBytes(100);
    expect(queued.pushFits(500)).toBe(true);
    queued.add('push', 60);
    queued.add('reply', 10_000);
    expect(queued.pushFits(40)).toBe(true);
    expect(queued.pushFits(41)).toBe(false);
    expect(queued.total()).toBe(10_060);
    queued.remove('push', 60);
    expect(queued.pushFits(100)).toBe(true);
  });

  it('When the socket is released, then nothing counts any more, also late write callbacks', () => {
    const queued = socketQueuedBytes(100);
    queued.add('push', 80);
    queued.add('reply', 50);
    queued.release();
    queued.remove('reply', 50);
    queued.add('push', 10);
    expect(queued.total()).toBe(0);
  });
});
