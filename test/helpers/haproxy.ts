import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { findProgram } from './peers';

// The HAProxy configuration the docs show (examples/haproxy/haproxy.cfg), run with the real haproxy
// package in front of svc instances: only the ports change; it runs in the foreground in its own folder.

export const HAPROXY = findProgram('haproxy');
const CONFIG = path.join(__dirname, '..', '..', 'examples', 'haproxy', 'haproxy.cfg');

export interface HaproxyFront {
  url: string;
  /** Each server's status by name (UP, DOWN, ...), from the runtime API's `show stat`. */
  servers(): Promise<Map<string, string>>;
  stop(): Promise<void>;
}

/** Starts HAProxy on `port` in `dir`, its servers a, b and c replaced by `backends` (host:port, three). */
export async function startHaproxyFront(dir: string, port: number, backends: readonly string[]): Promise<HaproxyFront> {
  let config = fs.readFileSync(CONFIG, 'utf8').replace('bind 127.0.0.1:8080', `bind 127.0.0.1:${port}`);
  backends.forEach((backend, index) => {
    config = config.replace(`127.0.0.1:${8901 + index} check`, `${backend} check`);
  });
  fs.writeFileSync(path.join(dir, 'haproxy.cfg'), config);
  const check = spawnSync(HAPROXY as string, ['-c', '-f', 'haproxy.cfg'], { cwd: dir, encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`haproxy -c failed: ${check.stdout}${check.stderr}`);
  const haproxy: ChildProcess = spawn(HAPROXY as string, ['-db', '-f', 'haproxy.cfg'], { cwd: dir, stdio: 'ignore' });
  const socket = path.join(dir, 'haproxy.sock');
  const ask = (command: string) =>
    new Promise<string>((resolve, reject) => {
      let answer = '';
      const connection = net.connect(socket, () => connection.end(`${command}\n`));
      connection.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
      connection.on('end', () => resolve(answer)).on('error', reject);
    });
  const front: HaproxyFront = {
    url: `http://127.0.0.1:${port}`,
    async servers() {
      const [header = '', ...rows] = (await ask('show stat')).split('\n').filter((line) => line.length > 0);
      const columns = header.replace(/^# /, '').split(',');
      const [proxy, server, status] = ['pxname', 'svname', 'status'].map((name) => columns.indexOf(name));
      const found = new Map<string, string>();
      for (const row of rows.map((line) => line.split(',')))
        if (row[proxy] === 'svc' && !['BACKEND', 'FRONTEND'].includes(row[server] ?? '')) found.set(row[server] ?? '', row[status] ?? '');
      return found;
    },
    async stop() {
      if (haproxy.exitCode !== null) return;
      const ended = new Promise((resolve) => haproxy.once('exit', resolve));
      haproxy.kill('SIGTERM');
      await ended;
    },
  };
  // Started once the runtime API answers.
  for (let tries = 0; ; tries += 1) {
    try {
      await front.servers();
      return front;
    } catch (error) {
      if (tries > 200 || haproxy.exitCode !== null) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}
