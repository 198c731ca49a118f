import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { eventually, until } from '../../helpers/eventually';
import { postJson } from '../../helpers/http';
import { makeTempDir } from '../../helpers/temp-dir';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// The rds and dls outputs (docs/outputs.md "rds: an FM station's RDS encoder", "dls: DAB+
// through ODR-PadEnc") through a real svc: an encoder's command port (a line receiver on
// loopback) gets one short connection per change with TEXT=, RTP= and DPS= lines inside RDS's
// limits, in order; a reader polling the DLS file 100 times a second never sees it half-written.

interface Connection {
  lines: string[];
  closed: boolean;
}

async function startLineReceiver(): Promise<{ port: number; connections: Connection[]; close: () => Promise<void> }> {
  const connections: Connection[] = [];
  const server = net.createServer((socket) => {
    const connection: Connection = { lines: [], closed: false };
    connections.push(connection);
    let buffered = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split('\r\n');
      buffered = parts.pop() ?? '';
      connection.lines.push(...parts);
      // An encoder acknowledges each command.
      socket.write('+\r\n');
    });
    socket.on('close', () => {
      connection.closed = true;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('rds output', () => {
  let receiver: Awaited<ReturnType<typeof startLineReceiver>>;
  let server: TestServer;
  beforeAll(async () => {
    receiver = await startLineReceiver();
    server = await startTestServer({
      config: { outputs: [{ name: 'rds', type: 'rds', url: `tcp://127.0.0.1:${receiver.port}`, ps: '{{artist}}', rtPlus: true }] } as never,
      outputPollMs: 50,
    });
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('When three tracks change, then the encoder gets one connection each, in order, with TEXT= of at most 64 ASCII characters, RT+ tags and the dynamic PS', async () => {
    const tracks = [
      { artist: 'Sigur Rós', title: 'Hoppípolla' },
      { artist: 'Godspeed You! Black Emperor', title: 'Storm: Lift Your Skinny Fists Like Antennas to Heaven' },
      { artist: 'Mötley Crüe', title: 'Kickstart My Heart' },
    ];
    for (const [index, track] of tracks.entries()) {
      await postJson(`${server.url}/v1/remoteinput`, track);
      await eventually(
        () => Promise.resolve(receiver.connections.filter((one) => one.closed).length),
        (count) => count === index + 1,
      );
    }
    expect(receiver.connections.map((one) => one.lines)).toEqual([
      ['TEXT=Sigur Ros - Hoppipolla', 'RTP=04,00,08,01,12,09', 'DPS=Sigur Ros'],
      // The title (34 characters) is too long for RT+ tag 2 (32): it goes first.
      ['TEXT=Godspeed You! Black Emperor - Storm: Lift Your Skinny Fists Like', 'RTP=01,30,33,04,00,26', 'DPS=Godspeed You! Black Emperor'],
      ['TEXT=Motley Crue - Kickstart My Heart', 'RTP=04,00,10,01,14,17', 'DPS=Motley Crue'],
    ]);
    for (const connection of receiver.connections) {
      const text = connection.lines[0]?.slice('TEXT='.length) ?? '';
      expect(text.length).toBeLessThanOrEqual(64);
      expect(text).toMatch(/^[\x20-\x7e]*$/);
    }
  });
});

describe('dls output', () => {
  const temp = makeTempDir();
  const file = path.join(temp.dir, 'dls.txt');
  let server: TestServer;
  afterAll(async () => {
    await server?.close();
    temp.cleanup();
  });

  it('When 40 tracks change while a reader polls the file 100 times a second, then every read is a whole DLS file with its DL Plus tags', async () => {
    server = await startTestServer({ config: { outputs: [{ name: 'dab', type: 'dls', path: file }] } as never, outputPollMs: 50 });
    const labels = new Set<string>();
    const bad: string[] = [];
    let reads = 0;
    const poll = setInterval(() => {
      let text: string;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch {
        return;
      }
      reads += 1;
      const lines = text.split('\n');
      const whole =
        lines[0] === '##### parameters { #####' &&
        lines.at(-3) === '##### parameters } #####' &&
        text.endsWith('\n') &&
        /^DL_PLUS_ITEM_TOGGLE=[01]$/m.test(text);
      const label = lines.at(-2) ?? '';
      const tags = [...text.matchAll(/^DL_PLUS_TAG=(\d+) (\d+) (\d+)$/gm)].map((match) =>
        [...label].slice(Number(match[2]), Number(match[2]) + Number(match[3]) + 1).join(''),
      );
      if (!whole || !/^Artist \d+ - Title \d+ ½$/.test(label) || tags.join('|') !== label.split(' - ').join('|')) bad.push(text);
      labels.add(label);
    }, 10);
    try {
      for (let index = 1; index <= 40; index++) await postJson(`${server.url}/v1/remoteinput`, { artist: `Artist ${index}`, title: `Title ${index} ½` });
      await eventually(
        () => Promise.resolve(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : ''),
        (text) => text.includes('Artist 40 - Title 40 ½'),
      );
      // A few more reads of the finished file (counted, not timed): a late partial write would show.
      const readsAtEnd = reads;
      await until(() => reads >= readsAtEnd + 10, 'ten more reads of the file');
    } finally {
      clearInterval(poll);
    }
    expect(bad).toEqual([]);
    expect(reads).toBeGreaterThan(20);
    expect(labels.has('Artist 40 - Title 40 ½')).toBe(true);
    expect(fs.readdirSync(temp.dir)).toEqual(['dls.txt']);
  });
});
