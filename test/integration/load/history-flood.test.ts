import path from 'node:path';
import { request } from '../../helpers/http';
import { startServeProcess, stopServeProcess, type ServeProcess } from '../../helpers/serve-process';
import { makeTempDir } from '../../helpers/temp-dir';
import { seedHistory } from '../../helpers/seed';

// The history flood (docs/limits-and-load.md "Expensive requests"): before the pool, 100 clients
// reading limit=1000 pages made 5 of 6 /v1/status probes time out and history answers take 30 s.
// Here every probe of the cheap endpoints must answer, and every reader gets a page or a 503 with
// Retry-After. How fast the probes answer is bench/ work (attack rows), not a timed assertion.

const READERS = 100;
const FLOOD_MS = 4000;

describe('100 parallel history readers', () => {
  jest.setTimeout(120_000);
  const temp = makeTempDir();
  let serve: ServeProcess;

  beforeAll(async () => {
    const dbFile = path.join(temp.dir, 'svc.db');
    await seedHistory(dbFile, 1500);
    serve = await startServeProcess(['--port', '0', '--db', dbFile, '--offline']);
  });
  afterAll(async () => {
    await stopServeProcess(serve);
    temp.cleanup();
  });

  it('When 100 clients read limit=1000 pages over and over, then /v1/last, /v1/status and a small kept history page answer every probe and readers get 200 or 503 with Retry-After', async () => {
    // A page the history page's own viewer reads: small, and kept once read (nothing is written during the flood).
    const smallPage = '/v1/history?limit=5';
    expect((await request(`${serve.url}${smallPage}`)).status).toBe(200);
    const until = Date.now() + FLOOD_MS;
    const readerAnswers: string[] = [];
    const reader = async (index: number) => {
      while (Date.now() < until) {
        // A different `before` per reader: no two share a kept copy, every page is real work.
        const response = await request(`${serve.url}/v1/history?limit=1000&before=${1500 - (index % 50)}`);
        readerAnswers.push(response.status === 503 ? `503 retry-after=${response.headers.get('retry-after')}` : String(response.status));
      }
    };
    const probeAnswers: string[] = [];
    const prober = async () => {
      while (Date.now() < until) {
        for (const probe of ['/v1/last', '/v1/status', smallPage]) {
          const status = await request(`${serve.url}${probe}`, { signal: AbortSignal.timeout(10_000) }).then(
            (response) => response.status,
            (error: Error) => error.name,
          );
          probeAnswers.push(`${probe} ${status}`);
        }
      }
    };
    await Promise.all([...Array.from({ length: READERS }, (_, index) => reader(index)), prober()]);
    expect(probeAnswers).toEqual(expect.arrayContaining(['/v1/last 200', '/v1/status 200', `${smallPage} 200`]));
    expect(probeAnswers.filter((answer) => !answer.endsWith(' 200'))).toEqual([]);
    expect(readerAnswers.filter((answer) => answer !== '200' && answer !== '503 retry-after=1')).toEqual([]);
    expect(readerAnswers).toContain('200');
  });
});
