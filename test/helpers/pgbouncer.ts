import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { findProgram } from './peers';
import { ADMIN_URL } from './postgres';
import { makeTempDir } from './temp-dir';

// Debian's real PgBouncer (package pgbouncer) between svc and the test PostgreSQL, in
// transaction pooling mode (docs/several-instances.md "PgBouncer"), as a normal process on its
// own ini file and an ephemeral loopback port. The settings are PgBouncer's documented ini keys
// (its doc/config.md: listen_addr, listen_port, unix_socket_dir, auth_type, auth_file, pool_mode,
// default_pool_size, max_client_conn, user). Run as root, PgBouncer refuses to start unless
// `user` names an account to switch to: the files are made readable for it.

/** Where pgbouncer is installed (Debian puts it in /usr/sbin), or undefined (test/helpers/peers.ts). */
export const PGBOUNCER = findProgram('pgbouncer');

export interface PgBouncer {
  /** The URL of `database` through PgBouncer (same user as ADMIN_URL). */
  url: string;
  /** The server connections PgBouncer may open for that database and user. */
  poolSize: number;
  stop(): Promise<void>;
}

export async function startPgBouncer(database: string, port: number, poolSize: number): Promise<PgBouncer> {
  const admin = new URL(ADMIN_URL);
  const temp = makeTempDir('svc-pgbouncer-');
  fs.chmodSync(temp.dir, 0o755);
  const user = decodeURIComponent(admin.username || 'postgres');
  const authFile = path.join(temp.dir, 'users.txt');
  fs.writeFileSync(authFile, `"${user}" ""\n`, { mode: 0o644 });
  const ini = [
    '[databases]',
    `${database} = host=${admin.hostname} port=${admin.port || '5432'} dbname=${database}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    "unix_socket_dir = ''",
    'auth_type = trust',
    `auth_file = ${authFile}`,
    'pool_mode = transaction',
    `default_pool_size = ${poolSize}`,
    'max_client_conn = 1000',
    // svc names its connections; PgBouncer passes application_name on.
    'ignore_startup_parameters = extra_float_digits',
    ...(process.getuid?.() === 0 ? ['user = postgres'] : []),
  ].join('\n');
  const iniFile = path.join(temp.dir, 'pgbouncer.ini');
  fs.writeFileSync(iniFile, `${ini}\n`, { mode: 0o644 });
  let log = '';
  const child: ChildProcess = spawn(PGBOUNCER as string, [iniFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  await listening(port, child, () => log);
  const url = new URL(ADMIN_URL);
  url.port = String(port);
  url.pathname = `/${database}`;
  return {
    url: url.toString(),
    poolSize,
    async stop() {
      if (child.exitCode === null) {
        const ended = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT');
        await ended;
      }
      temp.cleanup();
    },
  };
}

async function listening(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with ${child.exitCode}: ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port}: ${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
