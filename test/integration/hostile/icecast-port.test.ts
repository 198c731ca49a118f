import net from 'node:net';
import { startIcecastListener } from '../../../src/ingest/listener';
import { createLogger } from '../../../src/log';
import { eventually } from '../../helpers/eventually';
import { basicAuth, sourceHead, startIcecastTestServer, type IcecastTestServer } from '../../helpers/icecast-source';
import { until } from '../../helpers/eventually';
import { VORBIS_COMMENT_PREFIX, VORBIS_ID_PACKET, oggPage, vorbisCommentPacket } from '../../helpers/ogg-pages';
import { rawRequest } from '../../helpers/raw-http';
import { manualClock } from '../../helpers/manual-clock';
import { QUICK_DELAY_MS, quickThrottle, recordTurns, spacingOf, waitsOf } from '../../helpers/auth-turns';
import { storedCount } from '../../helpers/stored-count';

// Round three on the Icecast port (docs/security.md "Icecast sources", "Guessing the secret",
// "Logs"): each finding's attack, scaled down, against a real svc with its Icecast listener.

const PASSWORD = 'dj-password-7';

interface Client {
  socket: net.Socket;
  received: () => string;
  closed: Promise<void>;
}

/** A raw connection from `localAddress` that sends `data` and keeps what comes back. */
function connectFrom(port: number, localAddress: string, data: string | Buffer): Promise<Client> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress });
    let received = '';
    socket.on('data', (piece: Buffer) => (received += piece.toString('latin1')));
    socket.on('error', () => undefined);
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.once('connect', () => {
      socket.write(data);
      resolve({ socket, received: () => received, closed });
    });
  });
}

/** One request's whole answer (the listener closes after answering). */
async function ask(port: number, localAddress: string, head: string): Promise<string> {
  const client = await connectFrom(port, localAddress, head);
  await client.closed;
  return client.received();
}

const statusOf = (answer: string) => answer.split('\r\n')[0] ?? '';
const updinfo = (song: string, extra = '') => `GET /admin/metadata?mode=updinfo&mount=/live&song=${encodeURIComponent(song)}${extra} HTTP/1.0\r\n`;

/** An Ogg Vorbis stream that opens a comment header and keeps sending wanted values, never ending it. */
function endlessCommentStream(valueBytes: number, values: number): Buffer {
  const names = ['ARTIST', 'TITLE', 'ALBUM', 'ALBUMARTIST', 'GENRE', 'COMPOSER', 'LYRICIST', 'LABEL', 'PUBLISHER', 'COMMENT'];
  const comments = Array.from({ length: values }, (_, index) => `${names[index % names.length]}=${'x'.repeat(valueBytes)}`);
  const packet = vorbisCommentPacket(VORBIS_COMMENT_PREFIX, comments);
  const pages = [oggPage({ serial: 5, sequence: 0, headerType: 0x02, segments: [VORBIS_ID_PACKET] })];
  const pageBytes = 255 * 20;
  for (let at = 0, sequence = 1; at + pageBytes <= packet.length; at += pageBytes, sequence++) {
    pages.push(oggPage({ serial: 5, sequence, headerType: sequence === 1 ? 0 : 0x01, segments: [packet.subarray(at, at + pageBytes)], lastContinues: true }));
  }
  return Buffer.concat(pages);
}

describe('the Icecast port, round three', () => {
  jest.setTimeout(30_000);
  let svc: IcecastTestServer;
  afterEach(async () => svc?.close());

  it('N3: When a request carries Origin, Sec-Fetch-Site, Sec-Fetch-Dest, Referer or Upgrade-Insecure-Requests, then it is refused 403 even with the right password, and nothing is stored', async () => {
    svc = await startIcecastTestServer(PASSWORD, { config: { secret: PASSWORD } });
    const port = svc.listener.port;
    const auth = `Authorization: ${basicAuth(PASSWORD)}\r\n`;
    for (const browserHeader of [
      'Origin: http://evil.example',
      'Sec-Fetch-Site: cross-site',
      'Sec-Fetch-Dest: image',
      'Upgrade-Insecure-Requests: 1',
      'Referer: http://evil.example/page',
    ]) {
      expect(statusOf(await ask(port, '127.0.0.1', `${updinfo('Evil - Title')}${auth}${browserHeader}\r\n\r\n`))).toBe('HTTP/1.0 403 Forbidden');
      expect(statusOf(await ask(port, '127.0.0.1', `GET /admin.cgi?mode=updinfo&pass=${PASSWORD}&song=Evil HTTP/1.0\r\n${browserHeader}\r\n\r\n`))).toBe(
        'HTTP/1.0 403 Forbidden',
      );
      const source = sourceHead('PUT', '/evil.ogg', PASSWORD, { [browserHeader.split(': ')[0] ?? '']: browserHeader.split(': ')[1] ?? '' });
      expect(statusOf(await ask(port, '127.0.0.1', source))).toBe('HTTP/1.0 403 Forbidden');
    }
    expect(await storedCount(svc.ts.server.tracks)).toBe(0);
    // The DJ's own update, without those headers, still goes through.
    expect(await ask(port, '127.0.0.1', `${updinfo('DJ - Title')}${auth}\r\n`)).toContain('<return>1</return>');
  });

  it('N3: When no password is configured, then the listener does not start and says what to set', async () => {
    svc = await startIcecastTestServer(PASSWORD, { config: { secret: PASSWORD } });
    const start = startIcecastListener({
      host: '127.0.0.1',
      port: 0,
      password: '',
      submit: () => Promise.reject(new Error('no track is submitted: the listener does not start')),
      logger: createLogger(() => undefined),
    });
    await expect(start).rejects.toThrow(/icecastSource\.port needs a password: set icecastSource\.password/);
  });

  it('N2: When one address sends 8 admin.cgi guesses at once after a wrong one, then they are answered one per turn (each a delay or more after the one before) and logged in one line', async () => {
    // Short delays on a frozen clock (test/helpers/auth-turns.ts): the turns are read back, not timed.
    svc = await startIcecastTestServer(PASSWORD, { config: { secret: PASSWORD }, authThrottle: quickThrottle(manualClock()) });
    const turnsOf = recordTurns(svc.ts.server.authThrottle);
    const port = svc.listener.port;
    const guess = (n: number) => `GET /admin.cgi?mode=updinfo&pass=guess-${n}&song=Evil HTTP/1.0\r\n\r\n`;
    expect(statusOf(await ask(port, '127.0.0.6', guess(0)))).toBe('HTTP/1.0 401 Authentication Required');
    const answers = await Promise.all(Array.from({ length: 8 }, async (_, index) => statusOf(await ask(port, '127.0.0.6', guess(index + 1)))));
    expect(new Set(answers)).toEqual(new Set(['HTTP/1.0 401 Authentication Required']));
    // Before: 2,097 guesses a second. Now each guess has its own turn, the turns a delay (0.25 s in production) apart and more.
    const [first, ...queued] = turnsOf('127.0.0.6');
    expect(first).toEqual({ waitMs: 0 });
    expect(queued).toHaveLength(8);
    expect(Math.min(...spacingOf(waitsOf(queued)))).toBeGreaterThanOrEqual(QUICK_DELAY_MS);
    expect(svc.ts.logs.filter((line) => line.includes('failed authentication'))).toHaveLength(1);
    // Another address is not slowed, and the right password works there at once.
    expect(await ask(port, '127.0.0.1', `GET /admin.cgi?mode=updinfo&pass=${PASSWORD}&song=DJ%20-%20Song HTTP/1.0\r\n\r\n`)).toContain(
      'Metadata update successful',
    );
    expect(svc.ts.logs.join('\n')).not.toContain('guess-');
  });

  it('N2: When an address got a password wrong on the Icecast port, then its next guess on the HTTP API waits its turn too (one throttle for every door)', async () => {
    svc = await startIcecastTestServer(PASSWORD, { config: { secret: PASSWORD }, authThrottle: quickThrottle(manualClock()) });
    const turnsOf = recordTurns(svc.ts.server.authThrottle);
    const wrong = `GET /admin/metadata?mode=updinfo&song=Evil HTTP/1.0\r\nAuthorization: ${basicAuth('guess-1')}\r\n\r\n`;
    expect(statusOf(await ask(svc.listener.port, '127.0.0.9', wrong))).toBe('HTTP/1.0 401 Authentication Required');
    const answer = await rawRequest(`${svc.ts.url}/v1/outputs`, { headers: { 'X-SVC-Client-Auth': 'guess-2' }, localAddress: '127.0.0.9' });
    expect(answer.status).toBe(403);
    // The HTTP API's turn came the delay the Icecast port's failure earned after it.
    expect(turnsOf('127.0.0.9').slice(0, 2)).toEqual([{ waitMs: 0 }, { waitMs: QUICK_DELAY_MS }]);
    // A right secret from the same address, once its turn comes, clears it.
    expect((await rawRequest(`${svc.ts.url}/v1/outputs`, { headers: { 'X-SVC-Client-Auth': PASSWORD }, localAddress: '127.0.0.9' })).status).toBe(200);
    expect(svc.ts.logs.join('\n')).not.toContain('guess-');
  });

  it('N6: When one address opens 70 half-open title updates, then it holds at most 8 connections and the DJ from another address streams', async () => {
    svc = await startIcecastTestServer(PASSWORD, { config: { secret: PASSWORD } });
    const port = svc.listener.port;
    const attackers = await Promise.all(Array.from({ length: 70 }, () => connectFrom(port, '127.0.0.7', updinfo('Half - Open'))));
    const open = await eventually(
      () => Promise.resolve(attackers.filter((client) => !client.socket.destroyed && client.socket.readable).length),
      (count) => count <= 8,
    );
    expect(open).toBeLessThanOrEqual(8);
    const dj = await connectFrom(port, '127.0.0.1', sourceHead('PUT', '/live.ogg', PASSWORD));
    await until(() => dj.received().includes('\r\n\r\n'));
    expect(statusOf(dj.received())).toBe('HTTP/1.0 200 OK');
    dj.socket.destroy();
    for (const client of attackers) client.socket.destroy();
  });

  it('N6: When half-open title updates from several addresses fill every slot, then the DJ from a fresh address still streams', async () => {
    svc = await startIcecastTestServer(PASSWORD, { config: { secret: PASSWORD } }, undefined, { maxConnections: 16 });
    const port = svc.listener.port;
    const attackers: Client[] = [];
    for (const address of ['127.0.0.21', '127.0.0.22']) {
      for (let index = 0; index < 8; index++) attackers.push(await connectFrom(port, address, updinfo('Half - Open')));
    }
    const dj = await connectFrom(port, '127.0.0.1', sourceHead('PUT', '/live.ogg', PASSWORD));
    await until(() => dj.received().includes('\r\n\r\n'));
    expect(statusOf(dj.received())).toBe('HTTP/1.0 200 OK');
    expect(svc.ts.logs.some((line) => line.includes('closed the oldest half-open connection of 127.0.0.2'))).toBe(true);
    dj.socket.destroy();
    for (const client of attackers) client.socket.destroy();
  });

  it('N6: When 8 answered title updates from one address never close, then svc closes them and that address is served again', async () => {
    svc = await startIcecastTestServer(PASSWORD, { config: { secret: PASSWORD } });
    const port = svc.listener.port;
    const head = `${updinfo('Never - Closes')}Authorization: ${basicAuth(PASSWORD)}\r\n\r\n`;
    const stuck = await Promise.all(Array.from({ length: 8 }, () => connectFrom(port, '127.0.0.8', head)));
    for (const client of stuck) client.socket.pause();
    // Once svc has let go of them, a ninth from the same address gets its answer.
    const answered = await eventually(
      () => ask(port, '127.0.0.8', head),
      (answer) => answer.includes('<return>1</return>'),
    );
    expect(answered).toContain('<return>1</return>');
    for (const client of stuck) client.socket.destroy();
  });

  it('N5: When a source sends a comment header of wanted values that never ends, then it is closed at its memory budget', async () => {
    svc = await startIcecastTestServer(PASSWORD, { config: { secret: PASSWORD } }, undefined, { sourceMemoryBytes: 64 * 1024 });
    const source = await connectFrom(svc.listener.port, '127.0.0.1', sourceHead('PUT', '/endless.ogg', PASSWORD));
    await until(() => source.received().includes('\r\n\r\n'));
    source.socket.write(endlessCommentStream(8000, 200));
    await source.closed;
    expect(svc.ts.logs.join('\n')).toMatch(
      /endless\.ogg from .* closed: not a readable Ogg stream \(comment data over this source's memory budget \(65536 bytes\)\)/,
    );
  });

  it('N5: When two sources each stay within their own budget but pass the shared one, then the second is closed and the first keeps streaming', async () => {
    svc = await startIcecastTestServer(PASSWORD, { config: { secret: PASSWORD } }, undefined, {
      sourceMemoryBytes: 96 * 1024,
      totalSourceMemoryBytes: 128 * 1024,
    });
    const port = svc.listener.port;
    const first = await connectFrom(port, '127.0.0.1', sourceHead('PUT', '/one.ogg', PASSWORD));
    await until(() => first.received().includes('\r\n\r\n'));
    first.socket.write(endlessCommentStream(8000, 10));
    const second = await connectFrom(port, '127.0.0.1', sourceHead('PUT', '/two.ogg', PASSWORD));
    await until(() => second.received().includes('\r\n\r\n'));
    second.socket.write(endlessCommentStream(8000, 10));
    await second.closed;
    expect(svc.ts.logs.join('\n')).toContain('comment data over the memory budget all sources share');
    expect(first.socket.destroyed).toBe(false);
    first.socket.destroy();
  });

  it('N9: When a title update carries CR/LF and terminal escapes, then every logged line stays one line without control characters', async () => {
    svc = await startIcecastTestServer(PASSWORD, { config: { secret: PASSWORD } });
    const forged = encodeURIComponent('/live\r\n2026-01-01T00:00:00.000Z error forged line \u001b[2J');
    const answer = await ask(
      svc.listener.port,
      '127.0.0.1',
      `GET /admin/metadata?mode=updinfo&mount=${forged}&song=A%1b%5b31m%20-%20B HTTP/1.0\r\nAuthorization: ${basicAuth(PASSWORD)}\r\n\r\n`,
    );
    expect(answer).toContain('<return>1</return>');
    // eslint-disable-next-line no-control-regex -- control characters are what must not be there
    for (const line of svc.ts.logs) expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(svc.ts.logs.filter((line) => line.includes('forged line'))).toHaveLength(0);
  });

  it('N9: When a source chains 300 comment headers without tags, then the log gets one line of that kind, not 300', async () => {
    svc = await startIcecastTestServer(PASSWORD, { config: { secret: PASSWORD } });
    const source = await connectFrom(svc.listener.port, '127.0.0.1', sourceHead('PUT', '/quiet.ogg', PASSWORD));
    await until(() => source.received().includes('\r\n\r\n'));
    const pages: Buffer[] = [];
    for (let serial = 1; serial <= 300; serial++) {
      pages.push(oggPage({ serial, sequence: 0, headerType: 0x02, segments: [VORBIS_ID_PACKET] }));
      pages.push(oggPage({ serial, sequence: 1, headerType: 0x04, segments: [vorbisCommentPacket(VORBIS_COMMENT_PREFIX, ['X-NOTHING=1'])] }));
    }
    // A last header with a tag: once it is stored, every header before it was read.
    pages.push(oggPage({ serial: 999, sequence: 0, headerType: 0x02, segments: [VORBIS_ID_PACKET] }));
    pages.push(oggPage({ serial: 999, sequence: 1, headerType: 0x04, segments: [vorbisCommentPacket(VORBIS_COMMENT_PREFIX, ['TITLE=Marker'])] }));
    source.socket.write(Buffer.concat(pages));
    await until(async () => (await storedCount(svc.ts.server.tracks)) === 1);
    expect(svc.ts.logs.filter((line) => line.includes('comment header without tags'))).toHaveLength(1);
    source.socket.destroy();
  });

  it('Mount aliases: When /live.ogg is streaming, then /live.ogg/, //live.ogg and /%6Cive.ogg are the same mount (403 in use)', async () => {
    svc = await startIcecastTestServer(PASSWORD, { config: { secret: PASSWORD } });
    const port = svc.listener.port;
    const live = await connectFrom(port, '127.0.0.1', sourceHead('PUT', '/live.ogg', PASSWORD));
    await until(() => live.received().includes('\r\n\r\n'));
    for (const alias of ['/live.ogg/', '//live.ogg', '/%6Cive.ogg', '/./live.ogg']) {
      expect(statusOf(await ask(port, '127.0.0.1', sourceHead('PUT', alias, PASSWORD)))).toBe('HTTP/1.0 403 Forbidden');
    }
    expect(statusOf(await ask(port, '127.0.0.1', sourceHead('PUT', '/../etc', PASSWORD)))).toBe('HTTP/1.0 400 Bad Request');
    live.socket.destroy();
  });
});
