import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { until } from './eventually';
import { startReceiver } from './receiver';
import { makeTempDir } from './temp-dir';

// A real Icecast 2 server (Debian's icecast2) on its own config and a free loopback port, and a
// source streaming to one of its mounts with a PUT (Icecast 2.4's source protocol) or, on the
// Shoutcast-compatible socket, as a SHOUTcast 1 source does.

export interface IcecastServer {
  url: string;
  adminPassword: string;
  /** With `shoutcastCompat`: the port SHOUTcast 1 sources connect to (Icecast's is the next one up). */
  shoutcastSourcePort?: number;
  sourcePassword: string;
  /** Icecast's own view of its mounts: /status-json.xsl, `source` as an array. */
  sources(): Promise<Record<string, unknown>[]>;
  /** Kills icecast2 with SIGKILL (a crash: no listener_remove is sent), keeping its files for close(). */
  crash(): Promise<void>;
  close(): Promise<void>;
}

export interface IcecastSource {
  stop(): void;
}

export async function freePort(): Promise<number> {
  const probe = await startReceiver();
  await probe.close();
  return probe.port;
}

/** Two free ports in a row: a SHOUTcast 1 source connects to the listen port + 1. */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    const next = await new Promise<boolean>((resolve) => {
      const probe = net.createServer().once('error', () => resolve(false));
      probe.listen(port + 1, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (next) return port;
  }
}

export interface IcecastOptions {
  shoutcastCompat?: boolean;
  /** Listen here instead of on a free port (a config that names the server first). */
  port?: number;
  /** Extra elements inside <icecast>, e.g. <mount> sections with URL authentication. */
  extraConfig?: string;
}

export async function startIcecast(options: IcecastOptions = {}): Promise<IcecastServer> {
  const temp = makeTempDir('svc-icecast-');
  const port = options.port ?? (options.shoutcastCompat ? await freePortPair() : await freePort());
  const sourcePassword = `src-${Math.random().toString(36).slice(2)}`;
  const logDir = path.join(temp.dir, 'log');
  fs.mkdirSync(logDir);
  // Icecast refuses to run as root; it then drops to Debian's icecast2 user.
  const root = process.getuid?.() === 0;
  if (root) {
    fs.chmodSync(temp.dir, 0o711);
    fs.chmodSync(logDir, 0o777);
  }
  const config = `<icecast>
  <limits><clients>20</clients><sources>4</sources><source-timeout>10</source-timeout></limits>
  <authentication><source-password>${sourcePassword}</source-password><admin-user>admin</admin-user><admin-password>admin-${sourcePassword}</admin-password></authentication>
  <hostname>127.0.0.1</hostname>
  <listen-socket><port>${port}</port><bind-address>127.0.0.1</bind-address></listen-socket>
  ${options.shoutcastCompat ? `<listen-socket><port>${port + 1}</port><bind-address>127.0.0.1</bind-address><shoutcast-compat>1</shoutcast-compat></listen-socket>` : ''}
  <fileserve>1</fileserve>
  ${options.extraConfig ?? ''}
  <paths><basedir>/usr/share/icecast2</basedir><logdir>${logDir}</logdir><webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot></paths>
  <logging><accesslog>access.log</accesslog><errorlog>error.log</errorlog><loglevel>3</loglevel></logging>
  ${root ? '<security><chroot>0</chroot><changeowner><user>icecast2</user><group>icecast</group></changeowner></security>' : ''}
</icecast>`;
  const configFile = path.join(temp.dir, 'icecast.xml');
  fs.writeFileSync(configFile, config);
  const child: ChildProcess = spawn('icecast2', ['-c', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const status = async (): Promise<Record<string, unknown>[]> => {
    const response = await fetch(`${url}/status-json.xsl`);
    const json = (await response.json()) as { icestats?: { source?: Record<string, unknown> | Record<string, unknown>[] } };
    const source = json.icestats?.source;
    return source === undefined ? [] : Array.isArray(source) ? source : [source];
  };
  const answers = async () => {
    if (child.exitCode !== null) throw new Error(`icecast2 exited before it answered: ${output}`);
    return status().then(
      () => true,
      () => false,
    );
  };
  await until(answers, 'icecast2 answered /status-json.xsl', 30_000, 50).catch((error: unknown) => {
    throw new Error(`icecast2 did not start (${error instanceof Error ? error.message : String(error)}): ${output}`);
  });
  return {
    url,
    adminPassword: `admin-${sourcePassword}`,
    ...(options.shoutcastCompat ? { shoutcastSourcePort: port + 1 } : {}),
    sourcePassword,
    sources: status,
    crash: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      temp.cleanup();
    },
  };
}

/** Streams bytes to `mount` as an MP3 source would (updinfo sets titles on such mounts). */
export async function startSource(server: IcecastServer, mount: string): Promise<IcecastSource> {
  const request = http.request(`${server.url}${mount}`, {
    method: 'PUT',
    headers: {
      authorization: `Basic ${Buffer.from(`source:${server.sourcePassword}`).toString('base64')}`,
      'content-type': 'audio/mpeg',
      'ice-name': 'svc test',
      'ice-public': '0',
    },
  });
  request.on('error', () => undefined);
  // An MPEG-1 Layer III frame header (128 kbit/s, 44.1 kHz) and silence, over and over.
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  const timer = setInterval(() => request.write(Buffer.concat(Array(8).fill(frame) as Buffer[])), 100);
  request.write(frame);
  await until(async () => (await server.sources()).some((source) => mountedAt(source, mount)), `the source on ${mount} appeared`, 10_000, 50);
  return {
    stop: () => {
      clearInterval(timer);
      request.destroy();
    },
  };
}

/**
 * Streams to Icecast's Shoutcast mount (`/stream`) as a SHOUTcast 1 source does: the password
 * line, Icecast's `OK2`, the icy headers, then MP3 frames. Only such a source takes titles
 * through `/admin.cgi` (Icecast answers 400 "illegal metadata call" for others).
 */
export async function startShoutcastSource(server: IcecastServer): Promise<IcecastSource> {
  if (!server.shoutcastSourcePort) throw new Error('start Icecast with shoutcastCompat');
  const socket = net.connect(server.shoutcastSourcePort, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    let answer = '';
    socket.once('connect', () => socket.write(`${server.sourcePassword}\r\n`));
    const onData = (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      if (!answer.includes('\r\n')) return;
      socket.off('data', onData);
      if (!answer.startsWith('OK2')) return reject(new Error(`Icecast refused the SHOUTcast source: ${answer}`));
      socket.write('icy-name:svc test\r\nicy-pub:0\r\ncontent-type:audio/mpeg\r\n\r\n');
      resolve();
    };
    socket.on('data', onData);
  });
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  const timer = setInterval(() => socket.write(Buffer.concat(Array(8).fill(frame) as Buffer[])), 100);
  socket.write(frame);
  await until(async () => (await server.sources()).some((source) => mountedAt(source, '/stream')), 'the SHOUTcast source appeared', 10_000, 50);
  return {
    stop: () => {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

/** Whether one entry of Icecast's /status-json.xsl `source` list is the mount `mount`. */
function mountedAt(source: Record<string, unknown>, mount: string): boolean {
  return typeof source.listenurl === 'string' && source.listenurl.endsWith(mount);
}
