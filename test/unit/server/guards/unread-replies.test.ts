import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { QueueBudget } from '../../../../src/server/guards/queue-budget';
import { STALLED_READER_MS } from '../../../../src/server/streams/stream-reply';
import { reserveReply } from '../../../../src/server/guards/work-pool';

// Round three (docs/limits-and-load.md "Memory"): pipelined history pages that nobody reads
// were held without end; the documented 60 s drop never came, because a reply queued behind an
// unread one has no socket to destroy. A real HTTP server, a client that pipelines and never
// reads, and svc's own timers run forward (Node's socket internals keep real time).

const PAGE_BYTES = 4 * 1024 * 1024;

describe('unread replies', () => {
  afterEach(() => jest.useRealTimers());

  it('When a client pipelines 4 large replies and never reads, then its connection is dropped at 60 s and the budget is free again', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'performance', 'Date'] });
    const budget = new QueueBudget(64 * 1024 * 1024);
    let answered = 0;
    const server = http.createServer((request, response) => {
      // The first answer is a plain one (svc's cheap routes keep no stall timer); the pages behind it wait for its socket.
      if (request.url === '/v1/status') {
        answered += 1;
        response.end(Buffer.alloc(PAGE_BYTES, 0x62));
        return;
      }
      void reserveReply(request, response, budget, PAGE_BYTES).then(() => {
        answered += 1;
        response.end(Buffer.alloc(PAGE_BYTES, 0x61));
      });
    });
    let serverSideClosed = false;
    server.on('connection', (serverSide: net.Socket) => serverSide.once('close', () => (serverSideClosed = true)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.pause();
    socket.write(`GET /v1/status HTTP/1.1\r\nHost: localhost\r\n\r\n${'GET /v1/history HTTP/1.1\r\nHost: localhost\r\n\r\n'.repeat(4)}`);
    while (answered < 5) await new Promise((resolve) => setImmediate(resolve));
    expect(budget.hasRoomFor(64 * 1024 * 1024 - 4 * PAGE_BYTES + 1)).toBe(false);
    jest.advanceTimersByTime(STALLED_READER_MS + 1);
    // The client still reads nothing: svc must let go on its own (a bounded wait, in real time).
    for (let turns = 0; !serverSideClosed && turns < 2000; turns++) await new Promise((resolve) => setImmediate(resolve));
    expect(serverSideClosed).toBe(true);
    socket.destroy();
    while (!budget.hasRoomFor(64 * 1024 * 1024)) await new Promise((resolve) => setImmediate(resolve));
    expect(budget.hasRoomFor(64 * 1024 * 1024)).toBe(true);
    await new Promise((resolve) => server.close(resolve));
  });

  it('When one kept-alive connection gets 50 replies in turn, then its socket holds no listener per reply and the budget is free', async () => {
    const budget = new QueueBudget(64 * 1024 * 1024);
    const closeListeners: number[] = [];
    const server = http.createServer((request, response) => {
      void reserveReply(request, response, budget, 1024).then(() => {
        response.end('page', () => closeListeners.push(request.socket.listenerCount('close')));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const { port } = server.address() as AddressInfo;
    try {
      for (let index = 0; index < 50; index++) {
        await new Promise<void>((resolve, reject) => {
          http.get({ host: '127.0.0.1', port, path: '/v1/history', agent }, (response) => response.resume().on('end', resolve)).on('error', reject);
        });
      }
      expect(closeListeners).toHaveLength(50);
      expect(new Set(closeListeners).size).toBe(1);
      expect(budget.hasRoomFor(64 * 1024 * 1024)).toBe(true);
    } finally {
      agent.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
