import fc from 'fast-check';
import Database from 'better-sqlite3';
import { request } from '../helpers/http';
import { startTestServer, type TestServer } from '../helpers/test-server';

// Property: whatever a client sends, the server answers with a JSON body and a non-5xx status,
// stays up, and the database only ever holds well-formed records.

const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ unit: fc.constantFrom('\0', '\u0001', '\u202e', '\ud800', '\udfff', '🎧', 'é', '"', '\\', '%', '&', '=', '?', '#'), maxLength: 50 }),
  fc.constantFrom('', ' ', 'NaN', 'Infinity', '1e400', '-0', '__proto__', 'data:image/png;base64,AAAA', 'x'.repeat(5000)),
);
const key = fc.oneof(
  fc.constantFrom(
    'artist',
    'title',
    'album',
    'bpm',
    'duration',
    'secret',
    'hostname',
    '__proto__',
    'constructor',
    'coverurl',
    'isrc',
    'fpcalcfingerprint',
    'fpcalcduration',
    'track',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
);
const leaf = fc.oneof(hostileString, fc.double(), fc.integer(), fc.boolean(), fc.constant(null));
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('node'), { maxLength: 3 }), fc.dictionary(key, tie('node'), { maxKeys: 3 })),
})).node;
const submission = fc.dictionary(key, value, { maxKeys: 12 });

describe('fuzzing /v1/remoteinput', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { maxBodyBytes: 64 * 1024 } });
  });
  afterAll(() => t.close());

  async function expectWellBehaved(res: { status: number; text: string }): Promise<void> {
    expect(res.status).toBeLessThan(500);
    expect(() => JSON.parse(res.text) as unknown).not.toThrow();
  }

  it('When thousands of random and hostile JSON bodies are POSTed, then never a 5xx and always a JSON body', async () => {
    await fc.assert(
      fc.asyncProperty(submission, async (body) => {
        const res = await request(`${t.url}/v1/remoteinput`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
        await expectWellBehaved(res);
      }),
      { numRuns: 1500 },
    );
  });

  it('When random query strings are sent with GET, then never a 5xx and always a JSON body', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(key, hostileString), { maxLength: 10 }), async (pairs) => {
        const query = pairs.map(([k, v]) => `${encodeURIComponent(k.toWellFormed())}=${encodeURIComponent(v.toWellFormed())}`).join('&');
        await expectWellBehaved(await request(`${t.url}/v1/remoteinput?${query}`));
      }),
      { numRuns: 1000 },
    );
  });

  it('When raw bytes are thrown at the body parser, then never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 300 }),
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded'),
        async (bytes, type) => {
          await expectWellBehaved(await request(`${t.url}/v1/remoteinput`, { method: 'POST', headers: { 'Content-Type': type }, body: bytes }));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('Afterwards the server still answers and every stored record is a JSON object with valid text', async () => {
    expect((await request(`${t.url}/v1/status`)).status).toBe(200);
    const db = new Database(t.dbFile, { readonly: true });
    const integrity = db.pragma('integrity_check', { simple: true });
    const rows = db.prepare('SELECT dbid, metadata FROM tracks').all() as { dbid: number; metadata: string }[];
    db.close();
    expect(integrity).toBe('ok');
    expect(rows.length).toBeGreaterThan(100);
    for (const row of rows) {
      const metadata = JSON.parse(row.metadata) as Record<string, unknown>;
      expect(typeof metadata).toBe('object');
      expect(metadata).not.toHaveProperty('secret');
      expect(metadata).not.toHaveProperty('hostname');
      const expectCleanText = (text: string) => {
        expect(text).not.toContain('\0');
        expect(text.isWellFormed()).toBe(true);
        expect(Array.from(text).length).toBeLessThanOrEqual(1000);
      };
      for (const [field, fieldValue] of Object.entries(metadata)) {
        expect(field).not.toContain('\0');
        if (typeof fieldValue === 'string') {
          expectCleanText(fieldValue);
        } else if (Array.isArray(fieldValue)) {
          // Lists of text are kept (docs/decisions.md "Lists and field types"), never empty.
          expect(fieldValue.length).toBeGreaterThan(0);
          for (const element of fieldValue) {
            expect(typeof element).toBe('string');
            expectCleanText(element as string);
          }
        } else {
          expect(['number', 'boolean']).toContain(typeof fieldValue);
          if (typeof fieldValue === 'number') expect(Number.isFinite(fieldValue)).toBe(true);
        }
      }
    }
    expect(t.logs.filter((line) => line.includes(' error '))).toEqual([]);
  });
});
