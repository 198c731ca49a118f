import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { NowPlaying } from '../../../src/domain/current-track';
import type { TrackRecord } from '../../../src/domain/track';
import type { Logger } from '../../../src/log';
import { QueueBudget } from '../../../src/server/guards/queue-budget';
import { createImageHub, type ImageHub } from '../../../src/server/streams/ws/hub';
import { eventually } from '../../helpers/eventually';
import { closeCode, openRawWs, parseFrames, type RawWs } from '../../helpers/raw-ws';

// docs/limits-and-load.md "Frame once, write many": an audience of raw sockets on /v1/images/ws.
// Every socket gets every pushed frame once, in order, and the bytes are the same on every socket;
// a reader over its budget is closed (1013) while the others get every frame; a slow reader
// changes nobody else's order of arrival.

const record = (dbid: number, padding = 0): TrackRecord => ({
  dbid,
  receivedSeq: dbid,
  receivedAt: '2026-01-01T00:00:00.000Z',
  metadata: { artist: 'Audience', title: `Change ${dbid}`, ...(padding > 0 ? { comment: 'x'.repeat(padding) } : {}) },
});

interface Setup {
  nowPlaying: NowPlaying;
  warnings: string[];
  open: (count: number) => Promise<RawWs[]>;
  close: () => Promise<void>;
}

async function setup(maxBufferedBytes = 1024 * 1024): Promise<Setup> {
  const nowPlaying = new NowPlaying(record(0));
  const warnings: string[] = [];
  const logger: Logger = { info() {}, warn: (message) => warnings.push(message), error() {} };
  const hub: ImageHub = createImageHub({
    nowPlaying,
    images: { imagesOf: async () => [], on: () => undefined, off: () => undefined, find: async () => [], meta: async () => null, slice: async () => null },
    logger,
    version: 'test',
    budget: new QueueBudget(512 * 1024 * 1024),
    maxBufferedBytes,
    // Every socket that says nothing gets the push stream at once.
    subscribeWindowMs: 1,
  });
  const server = http.createServer((_request, response) => response.writeHead(404).end());
  server.on('upgrade', (request, socket, head: Buffer) => hub.handleUpgrade(request, socket, head));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sockets: RawWs[] = [];
  return {
    nowPlaying,
    warnings,
    async open(count) {
      const opened: RawWs[] = [];
      for (let done = 0; done < count; done += 100) {
        opened.push(...(await Promise.all(Array.from({ length: Math.min(100, count - done) }, () => openRawWs(url)))));
      }
      sockets.push(...opened);
      // Each subscriber gets the current track (dbid 0) first: the sign that it is subscribed.
      await eventually(
        async () => opened.filter((socket) => parseFrames(socket.received()).length > 0).length,
        (ready) => ready === count,
      );
      return opened;
    },
    async close() {
      for (const socket of sockets) socket.socket.destroy();
      await hub.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The dbids of the text frames a socket received, in order of arrival. */
function dbids(socket: RawWs): number[] {
  return parseFrames(socket.received())
    .filter((frame) => frame.opcode === 0x1)
    .map((frame) => (JSON.parse(frame.payload.toString('utf8')) as { dbid: number }).dbid);
}

const upTo = (last: number) => Array.from({ length: last + 1 }, (_, i) => i);

describe('an audience of 1,000 sockets on /v1/images/ws', () => {
  let s: Setup | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('When 20 changes follow each other at once, then every socket gets every frame once, in order, and the same bytes as every other socket', async () => {
    s = await setup();
    const sockets = await s.open(1000);
    for (let dbid = 1; dbid <= 20; dbid += 1) s.nowPlaying.offer(record(dbid));
    await eventually(
      async () => sockets.filter((socket) => parseFrames(socket.received()).length >= 21).length,
      (done) => done === sockets.length,
    );
    const first = sockets[0].received();
    expect(dbids(sockets[0])).toEqual(upTo(20));
    for (const socket of sockets) {
      expect(dbids(socket)).toEqual(upTo(20));
      expect(socket.received().equals(first)).toBe(true);
    }
  });

  it('When one reader reads slowly among 1,000 fast ones, then every fast one gets every frame in order, and so does the slow one in the end', async () => {
    s = await setup();
    const sockets = await s.open(1001);
    const slow = sockets[1000];
    // Reads a moment, then nothing for a while, again and again.
    const stutter = setInterval(() => (slow.socket.isPaused() ? slow.socket.resume() : slow.socket.pause()), 15);
    try {
      for (let dbid = 1; dbid <= 30; dbid += 1) {
        s.nowPlaying.offer(record(dbid, 2000));
        if (dbid % 5 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      const fast = sockets.slice(0, 1000);
      await eventually(
        async () => fast.filter((socket) => parseFrames(socket.received()).length >= 31).length,
        (done) => done === fast.length,
      );
      for (const socket of fast) expect(dbids(socket)).toEqual(upTo(30));
    } finally {
      clearInterval(stutter);
      slow.socket.resume();
    }
    await eventually(
      async () => dbids(slow).length,
      (count) => count >= 31,
    );
    expect(dbids(slow)).toEqual(upTo(30));
  });

  it('When one reader stops reading, then it is closed with 1013 once over its budget while the others get every frame', async () => {
    s = await setup(256 * 1024);
    const sockets = await s.open(51);
    const stuck = sockets[50];
    stuck.socket.pause();
    const others = sockets.slice(0, 50);
    let dbid = 0;
    // Frames of ~64 KiB: a few dozen fill the stuck reader's socket buffers and then its budget.
    while (!s.warnings.some((line) => line.includes('too slow')) && dbid < 400) {
      dbid += 1;
      s.nowPlaying.offer(record(dbid, 64 * 1024));
      const expected = dbid + 1;
      // Each frame reaches every other reader before the next change: nobody waits for the stuck one.
      await eventually(
        async () => others.filter((socket) => parseFrames(socket.received()).length >= expected).length,
        (done) => done === others.length,
        5000,
      );
    }
    expect(s.warnings.some((line) => line.includes('too slow'))).toBe(true);
    for (const socket of others) expect(dbids(socket)).toEqual(upTo(dbid));
    stuck.socket.resume();
    await eventually(
      async () => closeCode(parseFrames(stuck.received())),
      (code) => code !== undefined,
    );
    expect(closeCode(parseFrames(stuck.received()))).toBe(1013);
    // A hang guard, not a goal: each change is read back from 50 sockets (tens of seconds on a loaded machine).
  }, 120_000);
});
