import { spawn, type ChildProcess } from 'node:child_process';

// A private X server (Debian's Xvfb) for a desktop program under test (OBS Studio, Mixxx): it
// picks a free display itself and names it on a pipe (-displayfd), so parallel tests never collide.

export interface Xvfb {
  /** The DISPLAY value, e.g. `:99`. */
  display: string;
  process: ChildProcess;
}

export async function startXvfb(screen: string): Promise<Xvfb> {
  const xvfb = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', screen, '-nolisten', 'tcp'], { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
  const display = await new Promise<string>((resolve, reject) => {
    let text = '';
    xvfb.stdio[3]?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('\n')) resolve(`:${text.trim()}`);
    });
    xvfb.on('exit', () => reject(new Error('Xvfb exited')));
  });
  return { display, process: xvfb };
}
