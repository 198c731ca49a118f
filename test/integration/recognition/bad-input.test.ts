import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import path from 'node:path';
import { createLogger } from '../../../src/log';
import { until } from '../../helpers/eventually';
import { gateOnPeers } from '../../helpers/peers';
import { runCli } from '../../helpers/run-cli';
import { makeTempDir } from '../../helpers/temp-dir';
import { startHarnessed, testConfig, type HarnessedServer } from '../../helpers/test-server';

// Bad input to recognition (docs/recognition.md "Listening", "Pulled streams", "The library"):
// pulled URLs that answer HTML, random bytes, or accept and send nothing; the same garbage PUT
// into svc's Icecast listener; a library add naming a folder that does not exist and a file that
// is not audio. Each is reported (the status's `problem`, a log line, a clear message and exit
// code), the pulled ones are connected to again, and the rest of svc goes on: a submission on
// another channel is stored while all of it happens. Waits on conditions, never on a clock.

const SECRET = 'Bad-Input-5';
const temp = makeTempDir('svc-recognition-bad-');
const real = gateOnPeers(['ffmpeg', 'ffprobe', 'fpcalc', 'curl'], 'recognition with bad input');
let server: HarnessedServer;
let web: http.Server;
let hung: net.Server;
const connections = { html: 0, noise: 0, hung: 0 };
const logs: string[] = [];
const hungSockets: net.Socket[] = [];
let noise: Buffer;

real.beforeAll(async () => {
  noise = crypto.randomBytes(256 * 1024);
  web = http.createServer((request, response) => {
    if (request.url === '/page.mp3') {
      connections.html += 1;
      response.writeHead(200, { 'Content-Type': 'text/html' }).end(`<!doctype html><html><body>${'<p>not audio</p>'.repeat(2000)}</body></html>`);
    } else {
      connections.noise += 1;
      response.writeHead(200, { 'Content-Type': 'audio/mpeg' }).end(noise);
    }
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  // Accepts the connection and never answers.
  hung = net.createServer((socket) => {
    connections.hung += 1;
    hungSockets.push(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  const config = testConfig(
    {
      secret: SECRET,
      icecastSource: { port: 0 },
      recognition: {
        enabled: true,
        streams: [
          { url: `${base}/page.mp3`, channel: 'html', vinyl: false },
          { url: `${base}/noise.mp3`, channel: 'noise', vinyl: false },
          { url: `http://127.0.0.1:${(hung.address() as AddressInfo).port}/live`, channel: 'hung', vinyl: false },
        ],
      },
    },
    path.join(temp.dir, 'svc.db'),
  );
  // Connected to again after 200 ms (the doubling itself is tested in the unit tests); a stream silent for 1 s has hung.
  server = await startHarnessed(config, {
    logger: createLogger((line) => logs.push(line)),
    recognition: { realTime: false, backoffMs: () => 200, idleMs: 1000 },
  });
});

real.afterAll(async () => {
  await server?.close();
  for (const socket of hungSockets) socket.destroy();
  await new Promise((resolve) => web?.close(resolve));
  await new Promise((resolve) => hung?.close(resolve));
  temp.cleanup();
});

interface StreamStatus {
  name: string;
  channel: string;
  listening: boolean;
  problem?: string;
  title?: string;
}

async function streams(): Promise<StreamStatus[]> {
  const status = (await (await fetch(`${server.url}/v1/status`)).json()) as { recognition: { streams: StreamStatus[] } };
  return status.recognition.streams;
}

/** What each stream's status says between two tries: what the decoder made of it, or the silence. */
const PROBLEMS: Record<string, RegExp> = {
  html: /^not an audio stream \(Content-Type text\/html\); connecting again in 0 s$/,
  noise: /^(the stream ended without audio in it \(not an audio stream\?\)|ffmpeg stopped \(.+\)); connecting again in 0 s$/,
  hung: /^no data for 1 s; connecting again in 0 s$/,
};

async function streamOn(channel: string): Promise<StreamStatus | undefined> {
  return (await streams()).find((stream) => stream.channel === channel);
}

real.test(
  'pulled URLs that send HTML or random bytes are not listened to, with the reason, and are connected to again; a hung one too',
  async () => {
    await until(() => connections.html >= 2 && connections.noise >= 2 && connections.hung >= 2, 'each bad stream connected to twice', 60_000);
    await until(async () => (await streamOn('hung'))?.problem?.startsWith('no data for 1 s') === true, 'the hung stream reported', 60_000);
    // Each is connected to again and again: between two tries its status says why it is not listened to.
    for (const channel of ['html', 'noise', 'hung']) {
      await until(async () => (await streamOn(channel))?.listening === false, `${channel} shown not listening`, 60_000);
      const stream = await streamOn(channel);
      expect(stream?.problem).toMatch(PROBLEMS[channel] ?? /^$/);
      expect(stream?.title).toBeUndefined();
    }
    // No title came of any of it.
    const stored = (await server.tracks.history({ limit: 100 })).records.filter((record) => record.metadata.recognition !== undefined);
    expect(stored).toEqual([]);
    expect(logs.some((line) => /recognition: stream http:\/\/127\.0\.0\.1:\d+\/live: no data for 1 s \(attempt 1; again in 200 ms\)/.test(line))).toBe(true);
    // Nothing else stopped: a submission on another channel is stored and answered.
    const response = await fetch(`${server.url}/v1/remoteinput`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-SVC-Client-Auth': SECRET },
      body: JSON.stringify({ artist: 'Still', title: 'Working', channel: 'main' }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { processed_metadata: { title: string } }).processed_metadata.title).toBe('Working');
  },
  90_000,
);

real.test(
  'random bytes and HTML PUT into the Icecast listener: the source is accepted, its audio not listened to, with the reason',
  async () => {
    const garbage = path.join(temp.dir, 'garbage.mp3');
    fs.writeFileSync(garbage, noise);
    const page = path.join(temp.dir, 'page.mp3');
    fs.writeFileSync(page, `<!doctype html><html>${'<p>x</p>'.repeat(5000)}</html>`);
    const port = server.icecast?.port ?? 0;
    const put = (file: string, mount: string) =>
      new Promise<number | null>((resolve) => {
        const curl = spawn('curl', ['-sS', '-T', file, '-H', 'Content-Type: audio/mpeg', '-u', `source:${SECRET}`, `http://127.0.0.1:${port}${mount}`], {
          stdio: 'ignore',
        });
        curl.once('close', resolve);
      });
    expect(await put(garbage, '/garbage.mp3')).toBe(0);
    expect(await put(page, '/page.mp3')).toBe(0);
    for (const mount of ['/garbage.mp3', '/page.mp3']) {
      await until(
        async () => (await streams()).some((stream) => stream.name === `icecast:${mount}` && !stream.listening),
        `icecast:${mount} not listened to`,
        60_000,
      );
      const stream = (await streams()).find((candidate) => candidate.name === `icecast:${mount}`);
      expect(stream?.problem).toMatch(/./);
      expect(stream?.title).toBeUndefined();
    }
    expect((await fetch(`${server.url}/v1/status`)).status).toBe(200);
  },
  90_000,
);

real.test(
  'svc library add with a folder that does not exist and a file that is not audio: each named, the exit code 1',
  async () => {
    const notAudio = path.join(temp.dir, 'broken.mp3');
    fs.writeFileSync(notAudio, noise.subarray(0, 4096));
    const missing = path.join(temp.dir, 'no-such-folder');
    const result = await runCli(['library', 'add', missing, notAudio, '--url', server.url, '--secret', SECRET]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`svc: skipped ${missing}: no such file or folder`);
    expect(result.stderr).toMatch(new RegExp(`svc: skipped ${notAudio.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: cannot decode`));
    expect(result.stdout).toContain('added 0, unchanged 0, skipped 2; 0 tracks in the library');
  },
  90_000,
);
