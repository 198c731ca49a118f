import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findProgram } from './peers';

// The nginx configuration docs show (examples/nginx/nginx.conf), run with the real nginx package
// in front of svc instances: only the ports change; nginx gets its own prefix and pid file.

export const NGINX = findProgram('nginx');
const CONFIG = path.join(__dirname, '..', '..', 'examples', 'nginx', 'nginx.conf');

export interface NginxFront {
  url: string;
  stop(): Promise<void>;
}

/** Starts nginx on `port` in `dir`, its upstreams replaced by `backends` (host:port, up to three). */
export function startNginxFront(dir: string, port: number, backends: readonly string[]): NginxFront {
  let config = fs.readFileSync(CONFIG, 'utf8').replace('listen 127.0.0.1:8080;', `listen 127.0.0.1:${port};`);
  [0, 1, 2].forEach((index) => {
    const backend = backends[index];
    config =
      backend === undefined
        ? config.replace(new RegExp(`^\\s*server 127\\.0\\.0\\.1:${8901 + index}.*$`, 'gm'), '')
        : // The upstream's server lines (primary and backup), not the comment at the top that names the same ports.
          config.replaceAll(`server 127.0.0.1:${8901 + index}`, `server ${backend}`);
  });
  fs.writeFileSync(path.join(dir, 'nginx.conf'), config);
  const check = spawnSync(NGINX as string, ['-t', '-p', dir, '-c', 'nginx.conf'], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`nginx -t failed: ${check.stderr}`);
  const nginx: ChildProcess = spawn(NGINX as string, ['-p', dir, '-c', 'nginx.conf', '-g', 'daemon off;'], { stdio: 'ignore' });
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      if (nginx.exitCode !== null) return;
      const ended = new Promise((resolve) => nginx.once('exit', resolve));
      nginx.kill('SIGQUIT');
      await ended;
    },
  };
}
