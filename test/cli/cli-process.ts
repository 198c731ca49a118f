import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import net from 'node:net';
import { SVC_BIN, cleanEnv } from '../helpers/run-cli';
import { startTestServer, type TestServer } from '../helpers/test-server';

// A long-running `svc` process (--follow, watch-images) whose output the test reads as it comes.

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningCli {
  child: ChildProcessWithoutNullStreams;
  /** Complete stdout lines so far. */
  lines(): string[];
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout holds at least `count` complete lines. */
  waitForLines(count: number, timeoutMs?: number): Promise<string[]>;
  /** Resolves once stderr matches. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Sends a signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
  exited: Promise<Exit>;
}

const running = new Set<ChildProcessWithoutNullStreams>();

/** Kills whatever a test left running; call from afterEach. */
export function killLeftovers(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

/**
 * A fresh svc for each test of the describe it is called in, handed to `use`; after each test the
 * CLI processes it started are killed and the server closed.
 */
export function serverPerTest(use: (server: TestServer) => void): void {
  let current: TestServer | undefined;
  beforeEach(async () => {
    current = await startTestServer();
    use(current);
  });
  afterEach(async () => {
    killLeftovers();
    await current?.close();
    current = undefined;
  });
}

export function startCli(args: readonly string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): RunningCli {
  const child = spawn(process.execPath, [SVC_BIN, ...args], { env: { ...cleanEnv(), ...options.env }, cwd: options.cwd });
  running.add(child);
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((check) => check());
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    notify();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    notify();
  });
  const exited = new Promise<Exit>((resolve) =>
    child.on('close', (code, signal) => {
      running.delete(child);
      notify();
      resolve({ code, signal });
    }),
  );
  const lines = () => stdout.split('\n').slice(0, -1);

  const waitFor = (done: () => boolean, what: () => string, timeoutMs: number) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (done()) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        } else if (child.exitCode !== null || child.signalCode !== null) {
          waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`svc exited (${child.exitCode ?? child.signalCode}) before ${what()}\nstdout: ${stdout}\nstderr: ${stderr}`));
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for ${what()}\nstdout: ${stdout}\nstderr: ${stderr}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });

  return {
    child,
    lines,
    stdout: () => stdout,
    stderr: () => stderr,
    async waitForLines(count, timeoutMs = 10_000) {
      await waitFor(
        () => lines().length >= count,
        () => `${count} stdout lines`,
        timeoutMs,
      );
      return lines();
    },
    waitForStderr: (pattern, timeoutMs = 10_000) =>
      waitFor(
        () => pattern.test(stderr),
        () => `stderr matching ${pattern}`,
        timeoutMs,
      ),
    async stop(signal = 'SIGINT') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    exited,
  };
}

/** A loopback port that nothing listens on (bound, noted, closed). */
export async function unusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
