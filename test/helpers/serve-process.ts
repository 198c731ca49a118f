import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { SVC_BIN, cleanEnv } from './run-cli';

export interface ServeProcess {
  child: ChildProcessWithoutNullStreams;
  url: string;
  /** Everything printed on stdout so far (the start-up banner). */
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

/** Starts `svc serve` as a real process and waits for its "listening on <url>" line. */
export function startServeProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<ServeProcess> {
  const child = spawn(process.execPath, [SVC_BIN, 'serve', ...args], { env: { ...cleanEnv(), ...env }, cwd });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svc serve did not start: ${stderr}`));
    }, 15_000);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /listening on (\S+)/.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ child, url: match[1], stdout: () => stdout, stderr: () => stderr, exited });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`svc serve exited with ${code}: ${stderr}`));
    });
  });
}

/** Sends SIGTERM and waits for the exit code. */
export async function stopServeProcess(serve: ServeProcess): Promise<number | null> {
  serve.child.kill('SIGTERM');
  return serve.exited;
}
