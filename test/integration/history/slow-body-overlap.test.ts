import http from 'node:http';
import { asObject, postJson } from '../../helpers/http';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// One current track (docs/decisions.md "Delivery promises"): two submissions overlap and the one
// that started first sends its body slowly, so it is stored second. Every round, /v1/last, the
// newest /v1/history entry and the highest stored dbid are the same record.

const ROUNDS = 100;

/** A POST whose body is sent in two halves: the second only when `release` is called. */
function slowPost(url: string, fields: Record<string, string>): { release: () => void; answer: Promise<Record<string, unknown>> } {
  const body = Buffer.from(JSON.stringify(fields));
  const target = new URL(url);
  let release = () => undefined as void;
  const answer = new Promise<Record<string, unknown>>((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>));
      },
    );
    req.on('error', reject);
    req.write(body.subarray(0, 5));
    release = () => req.end(body.subarray(5));
  });
  return { release, answer };
}

describe('overlapping submissions with a slow body', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it(`When the first body arrives after a second submission is stored (${ROUNDS} rounds), then /v1/last is the newest history entry and the highest dbid`, async () => {
    const disagreements: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const slow = slowPost(`${server.url}/v1/remoteinput`, { artist: 'Slow', title: `slow ${round}` });
      const fast = Number(asObject((await postJson(`${server.url}/v1/remoteinput`, { artist: 'Fast', title: `fast ${round}` })).json).dbid);
      slow.release();
      const slowDbid = Number((await slow.answer).dbid);
      const last = asObject(await (await fetch(`${server.url}/v1/last`)).json());
      const newest = (asObject(await (await fetch(`${server.url}/v1/history?limit=1`)).json()).tracks as { dbid: number }[])[0];
      const highest = Math.max(fast, slowDbid);
      if (last.dbid !== highest || newest?.dbid !== highest)
        disagreements.push(`round ${round}: last ${String(last.dbid)}, newest ${String(newest?.dbid)}, highest ${highest}`);
    }
    expect(disagreements).toEqual([]);
  }, 60_000);
});
