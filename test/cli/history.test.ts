import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { asObject, postJson, request } from '../helpers/http';
import { killLeftovers, startCli } from './cli-process';
import { SVC_BIN, cleanEnv, runCli } from '../helpers/run-cli';
import { makeTempDir } from '../helpers/temp-dir';
import { startTestServer, type TestServer } from '../helpers/test-server';

// `svc history` against a running server, in every output format (docs/decisions.md "History").

describe('svc history, a short set', () => {
  let t: TestServer;
  const env = { TZ: 'UTC' };
  beforeAll(async () => {
    t = await startTestServer();
    const tracks = [
      { artist: 'Massive Attack', title: 'Teardrop', album: 'Mezzanine', label: 'Virgin', date: '1998', isrc: ['GBAAA9800001', 'GBAAA9800002'], duration: 330 },
      { artist: 'Daft Punk', title: 'One More Time', album: 'Discovery', date: '2001-03-12' },
      { artist: 'The "Quoted", Band', title: 'Commas, "Quotes"\nand a line', album: 'Odd' },
    ];
    for (const track of tracks) await postJson(`${t.url}/v1/remoteinput`, track);
  });
  afterAll(() => t.close());

  const history = (...args: string[]) => runCli(['history', '--url', t.url, ...args], { env });

  it('When run without a format, then it prints HH:MM  Artist - Title lines, oldest first, in local time', async () => {
    const result = await history();
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const stored = (await t.server.tracks.history({ limit: 10 })).records.reverse();
    const clock = (iso: string) => iso.slice(11, 16);
    expect(result.stdout).toBe(
      [
        `${clock(stored[0].receivedAt)}  Massive Attack - Teardrop`,
        `${clock(stored[1].receivedAt)}  Daft Punk - One More Time`,
        // A line break sent by a submitter never splits a line of the setlist.
        `${clock(stored[2].receivedAt)}  The "Quoted", Band - Commas, "Quotes" and a line`,
        '',
      ].join('\n'),
    );
  });

  it('When TZ names another zone, then the times are that local time', async () => {
    const utc = await history();
    const kolkata = await runCli(['history', '--url', t.url], { env: { TZ: 'Asia/Kolkata' } });
    const shift = (line: string) => {
      const [h, m] = line.slice(0, 5).split(':').map(Number) as [number, number];
      return (h * 60 + m + 330) % 1440;
    };
    const first = (text: string) => text.split('\n')[0];
    const [kh, km] = first(kolkata.stdout).slice(0, 5).split(':').map(Number) as [number, number];
    expect(kh * 60 + km).toBe(shift(first(utc.stdout)));
  });

  it('When --csv is given, then it prints RFC 4180 with the header row, quoting commas, quotes and line breaks', async () => {
    const result = await history('--csv');
    expect(result.code).toBe(0);
    const stored = (await t.server.tracks.history({ limit: 10 })).records.reverse();
    expect(result.stdout).toBe(
      [
        'received_at,artist,title,album,label,date,isrc,duration,started_at,ended_at,end_reason,kind,usage,channel,dj,show,atp,listener_seconds,peak',
        `${stored[0].receivedAt},Massive Attack,Teardrop,Mezzanine,Virgin,1998,GBAAA9800001; GBAAA9800002,330,${stored[0].receivedAt},${stored[1].receivedAt},next,music,feature,main,,,,,`,
        `${stored[1].receivedAt},Daft Punk,One More Time,Discovery,,2001-03-12,,,${stored[1].receivedAt},${stored[2].receivedAt},next,music,feature,main,,,,,`,
        `${stored[2].receivedAt},"The ""Quoted"", Band","Commas, ""Quotes""\nand a line",Odd,,,,,${stored[2].receivedAt},,,music,feature,main,,,,,`,
        '',
      ].join('\r\n'),
    );
  });

  it('When --json is given, then each line is one /v1/history entry, oldest first', async () => {
    const result = await history('--json');
    const lines = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const api = (await (await fetch(`${t.url}/v1/history`)).json()) as { tracks: unknown[] };
    expect(lines).toEqual([...api.tracks].reverse());
  });

  it('When --format is given, then each track is printed with the template', async () => {
    const result = await history('--format', '{title} / {album}', '--limit', '2');
    expect(result.stdout).toBe('One More Time / Discovery\nCommas, "Quotes" and a line / Odd\n');
  });

  it('When --since is a malformed WHEN, then usage error 2 and nothing on stdout', async () => {
    const result = await history('--since', 'yesterday');
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain('--since');
  });

  it('When --csv and --json are both given, then usage error 2', async () => {
    expect((await history('--csv', '--json')).code).toBe(2);
  });

  it('When the server cannot be reached, then exit 4 and not even the CSV header on stdout', async () => {
    const closed = await startTestServer();
    const url = closed.url;
    await closed.close();
    const result = await runCli(['history', '--csv', '--url', url], { env });
    expect(result).toMatchObject({ code: 4, stdout: '' });
    expect(result.stderr).toMatch(/cannot reach/);
  });
});

describe('svc history, a long range', () => {
  let t: TestServer;
  const total = 2345;
  const start = Date.UTC(2026, 0, 1);
  beforeAll(async () => {
    t = await startTestServer();
    // Stored straight through the real store: one track a minute from 2026-01-01 00:00 UTC.
    const tracks = t.server.tracks;
    for (let i = 0; i < total; i++) {
      await tracks.insert({
        receivedSeq: await tracks.nextReceivedSeq(),
        receivedAt: new Date(start + i * 60_000).toISOString(),
        metadata: { artist: 'DJ', title: `T${i}` },
      });
    }
  });
  afterAll(() => t.close());

  it('When the range spans several pages, then every track comes exactly once, oldest first', async () => {
    const result = await runCli(['history', '--url', t.url, '--json']);
    expect(result.code).toBe(0);
    const titles = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as { title: string }).title);
    expect(titles).toEqual(Array.from({ length: total }, (_, i) => `T${i}`));
  });

  it('When a page is cut off in the middle of an export, then it exits non-zero naming the failure, never 0 with a short setlist', async () => {
    // A stand-in between the CLI and the server that cuts the fourth page asked for after half its
    // Content-Length, as a connection lost mid-body would: the walk back to the oldest page took
    // three, the oldest page's tracks are out, and the fourth is the middle page read again.
    let requests = 0;
    const proxy = http.createServer((req, res) => {
      requests++;
      const cut = requests === 4;
      const upstream = http.get(new URL(req.url ?? '/', t.url), { headers: req.headers }, (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = Buffer.concat(chunks);
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          if (!cut) {
            res.end(body);
            return;
          }
          res.write(body.subarray(0, body.length >> 1));
          res.socket?.destroy();
        });
      });
      upstream.on('error', () => res.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = proxy.address() as AddressInfo;
      const result = await runCli(['history', '--url', `http://127.0.0.1:${port}`, '--csv']);
      expect(requests).toBe(4);
      expect(result.code).not.toBe(0);
      expect(result.stderr).not.toBe('');
      // What came before the cut is on stdout, and no more: the exit code is what says it is short.
      const rows = result.stdout.split('\r\n').length - 2;
      expect([rows > 0, rows < total]).toEqual([true, true]);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('When --limit is over a page, then the newest N tracks come, oldest first', async () => {
    const result = await runCli(['history', '--url', t.url, '--json', '--limit', '1500']);
    const titles = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as { title: string }).title);
    expect(titles).toEqual(Array.from({ length: 1500 }, (_, i) => `T${total - 1500 + i}`));
  });

  it('When --since and --until are ISO times with an offset, then only that range comes', async () => {
    const result = await runCli(['history', '--url', t.url, '--since', '2026-01-01T02:00:00+01:00', '--until', '2026-01-01T01:03:00Z'], { env: { TZ: 'UTC' } });
    expect(result.stdout).toBe('01:00  DJ - T60\n01:01  DJ - T61\n01:02  DJ - T62\n');
  });

  it('When --since is a span back from now, then older tracks are left out', async () => {
    const recent = new Date(Date.now() - 30 * 60_000).toISOString();
    await t.server.tracks.insert({ receivedSeq: await t.server.tracks.nextReceivedSeq(), receivedAt: recent, metadata: { artist: 'DJ', title: 'Just now' } });
    const result = await runCli(['history', '--url', t.url, '--since', '90m', '--format', '{title}']);
    expect(result.stdout).toBe('Just now\n');
  });

  it('When piped into `head -n 1`, then it ends with 0 within a second of head going away and writes nothing on stderr', async () => {
    const { dir, cleanup } = makeTempDir();
    try {
      const errFile = `${dir}/stderr.txt`;
      const script = `"${process.execPath}" "${SVC_BIN}" history --json --url ${t.url} 2>"$ERR_FILE" | head -n 1; echo "exit=\${PIPESTATUS[0]}"`;
      const shell = spawn('bash', ['-c', script], { env: { ...cleanEnv(), ERR_FILE: errFile } });
      let out = '';
      shell.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      const code = await new Promise<number | null>((resolve) => shell.on('close', resolve));
      expect(code).toBe(0);
      expect(out).toMatch(/^\{"dbid":1,"artist":"DJ","title":"T0",.*\}\nexit=0\n$/);
      expect(fs.readFileSync(errFile, 'utf8')).toBe('');
    } finally {
      cleanup();
    }
  });
});

describe('svc last --follow when the current track is deleted', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { secret: 's3cret' } });
  });
  afterAll(() => t.close());
  afterEach(killLeftovers);

  it('When the current track is deleted, then --follow prints the previous one, now current', async () => {
    const submit = async (title: string) =>
      asObject((await postJson(`${t.url}/v1/remoteinput`, { artist: 'DJ', title }, { 'X-SVC-Client-Auth': 's3cret' })).json).dbid as number;
    await submit('Previous');
    const mistake = await submit('Mistake');
    const follow = startCli(['last', '--follow', '--url', t.url, '--format', '{title}']);
    expect(await follow.waitForLines(1)).toEqual(['Mistake']);
    const res = await request(`${t.url}/v1/history/${mistake}`, { method: 'DELETE', headers: { 'X-SVC-Client-Auth': 's3cret' } });
    expect(res.status).toBe(204);
    expect(await follow.waitForLines(2)).toEqual(['Mistake', 'Previous']);
    expect(await follow.stop()).toEqual({ code: 0, signal: null });
  });
});
