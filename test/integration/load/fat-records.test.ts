import path from 'node:path';
import { residentBytes } from '../../helpers/attackers';
import { asObject, getWithQuery, postJson, request } from '../../helpers/http';
import { startServeProcess, stopServeProcess, type ServeProcess } from '../../helpers/serve-process';
import { makeTempDir } from '../../helpers/temp-dir';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// Fat records (docs/limits-and-load.md "Records"): before the bound, one submission of a 1 MB
// list was stored whole, and 600 of them made a 1,000-row history page answer 500 and four
// 250-row pages take the server to 3.6 GiB.

const MiB = 1024 * 1024;

describe('bounded records on every way in', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('When a 1 MB list is posted, then it is stored cut to limits.maxRecordBytes, with warnings naming the field', async () => {
    const genres = Array.from({ length: 1000 }, (_, index) => `${index}\u0001`.padEnd(1000, 'x'));
    const response = await postJson(`${t.url}/v1/remoteinput`, { artist: 'Fat', title: 'List', genres });
    expect(response.status).toBe(200);
    const body = asObject(response.json);
    expect(body.warnings).toEqual([
      "Field 'genres' truncated from 1000 to 100 items",
      expect.stringMatching(/^Field 'genres' truncated from 100 to \d+ items$/),
    ]);
    const stored = asObject((await request(`${t.url}/v1/last`)).json);
    expect(Buffer.byteLength(JSON.stringify(stored))).toBeLessThan(65536 + 1024);
    expect((stored.genres as string[])[0]).toBe('0'.padEnd(999, 'x'));
  });

  it('When a GET carries control characters, then they are removed like NUL and the record is stored', async () => {
    const response = await getWithQuery(`${t.url}/v1/remoteinput`, { artist: 'Get\u001b[31m', title: 'Line\r\nTwo\u0007' });
    expect(response.status).toBe(200);
    expect(asObject(asObject(response.json).processed_metadata)).toMatchObject({ artist: 'Get[31m', title: 'Line\nTwo' });
  });

  it('When the field names alone cannot fit a configured small record, then the answer is 413 and nothing is stored', async () => {
    const small = await startTestServer({ config: { limits: { maxRecordBytes: 1024 } } });
    try {
      const query: Record<string, string> = { title: 'T' };
      for (let index = 0; index < 20; index += 1) query[`${'n'.repeat(100)}${index}`] = String(index);
      const response = await getWithQuery(`${small.url}/v1/remoteinput`, query);
      expect(response.status).toBe(413);
      expect(asObject(response.json).error).toMatch(/cannot fit in 1024 bytes/);
      expect(asObject((await request(`${small.url}/v1/history`)).json).tracks).toEqual([]);
    } finally {
      await small.close();
    }
  });
});

describe('600 fat submissions', () => {
  jest.setTimeout(180_000);
  const temp = makeTempDir();
  let serve: ServeProcess;

  beforeAll(async () => {
    serve = await startServeProcess(['--port', '0', '--db', path.join(temp.dir, 'svc.db'), '--offline']);
  });
  afterAll(async () => {
    await stopServeProcess(serve);
    temp.cleanup();
  });

  it('When 600 records at the size limit are stored, then a 1,000-row page answers and four 250-row pages keep RSS under 300 MiB', async () => {
    // 100 elements of 1,000 characters: cut to the 64 KiB bound, the largest record there is.
    const genres = Array.from({ length: 100 }, (_, index) => `${index}`.padEnd(1000, '\u00e9'));
    for (let sent = 0; sent < 600; sent += 6) {
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, index) => postJson(`${serve.url}/v1/remoteinput`, { artist: 'Fat', title: `T${sent + index}`, genres })),
      );
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    }
    const pid = serve.child.pid ?? 0;
    let peak = residentBytes(pid);
    const sampler = setInterval(() => (peak = Math.max(peak, residentBytes(pid))), 50);
    try {
      const pages = await Promise.all(Array.from({ length: 4 }, () => request(`${serve.url}/v1/history?limit=250`)));
      expect(pages.map((page) => page.status)).toEqual([200, 200, 200, 200]);
      expect(pages.map((page) => page.text.length < 250 * 66_000)).toEqual([true, true, true, true]);
      // A 1,000-row page answers, cut at the page byte cap with a `next` link; following the links reaches all 600.
      let seen = 0;
      for (let next: unknown = 'v1/history?limit=1000'; typeof next === 'string';) {
        const page = await request(`${serve.url}/${next}`);
        expect(page.status).toBe(200);
        seen += (asObject(page.json).tracks as unknown[]).length;
        next = asObject(page.json).next;
      }
      expect(seen).toBe(600);
    } finally {
      clearInterval(sampler);
    }
    expect(peak).toBeLessThan(300 * MiB);
  });
});
