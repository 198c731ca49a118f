import { spawn } from 'node:child_process';
import path from 'node:path';

// Outbound limits under a garbage collector that runs all the time (docs/decisions.md, nodejs/node#57736).
// On Node 20, `AbortSignal.any([parent, AbortSignal.timeout(ms)])` holds the timeout signal
// weakly, so a collection can drop it and the limit never fires. Each case runs in its own
// `node --expose-gc` process (test/fixtures/gc/timeout-under-gc.js) against the built code in
// dist/, with gc() forced every 5 ms, and a loopback server that never answers. With the old
// pattern the first and third cases fail: the request hangs past 3 s, the cover outlasts its share
// of the budget and the submission becomes a 408.

const SCRIPT = path.join(__dirname, '..', 'fixtures', 'gc', 'timeout-under-gc.js');
const DIST = path.join(__dirname, '..', '..', 'dist');

interface Outcome {
  outcome: 'resolved' | 'rejected' | 'never-fired';
  afterMs: number;
  detail?: string;
}

function runUnderGc(which: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', SCRIPT, DIST, which], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`exit ${String(code)}: ${stderr}`));
      resolve(JSON.parse(stdout.trim()) as Outcome);
    });
  });
}

describe('Outbound limits hold while the garbage collector runs', () => {
  it('When a service never answers, then the 200 ms per-request limit of ServiceClient fires', async () => {
    const result = await runUnderGc('service-client');
    expect(result.outcome).toBe('rejected');
    expect(result.detail).toMatch(/no answer within 200 ms/);
  });

  it('When an image host never answers, then the image fetcher gives up at its 200 ms limit', async () => {
    const result = await runUnderGc('image-fetcher');
    expect(result.outcome).toBe('rejected');
    expect(result.detail).toMatch(/no complete image within 200 ms/);
  });

  it('When a submitted cover never arrives, then it is given up inside the budget and the submission is answered with a warning', async () => {
    const result = await runUnderGc('submit-cover');
    expect(result.outcome).toBe('resolved');
    // Its share is 0.8 of the 1 s processing budget: given up inside it, the submission is answered
    // with the warning; past the budget it would have been a 408 (the outcome says which, not the clock).
    expect(result.detail).toBe(JSON.stringify(['cover given up']));
  });

  it('When a deadlineSignal is not referenced by anyone, then it still aborts on time with a TimeoutError', async () => {
    const result = await runUnderGc('deadline');
    expect(result.outcome).toBe('rejected');
    expect(result.detail).toMatch(/no answer within 200 ms/);
  });
});
