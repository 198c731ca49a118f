import { createHash, createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { rawRequest } from '../../helpers/raw-http';
import { makeTempDir } from '../../helpers/temp-dir';
import { startTestServer } from '../../helpers/test-server';

// Round three, N8 and N10 (docs/security.md "Secrets at rest", "Idempotency keys"): the
// idempotency fingerprint was an unsalted SHA-256 over a request that carries the secret, in a
// database readable by everyone (0644 in a 0755 folder); a dictionary recovered the secret in
// 1.6 s. And a repeat with a wrong secret reached the key lookup.

const SECRET = 'correct-horse-battery';

describe('secrets at rest', () => {
  const temp = makeTempDir('svc-at-rest-');
  afterAll(() => temp.cleanup());

  it('When svc creates its folders and database, then they are 0700 and 0600, and a stored fingerprint is an HMAC under a random key, not a hash of the request', async () => {
    const dbFile = path.join(temp.dir, 'new', 'nested', 'svc.db');
    const t = await startTestServer({ dbFile, config: { secret: SECRET } });
    try {
      const answer = await rawRequest(`${t.url}/v1/remoteinput?artist=A&title=B`, { headers: { 'X-SVC-Client-Auth': SECRET, 'Idempotency-Key': 'key-1' } });
      expect(answer.status).toBe(200);
      for (const dir of [path.join(temp.dir, 'new'), path.dirname(dbFile)]) expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
      for (const file of [dbFile, `${dbFile}-wal`]) expect(fs.statSync(file).mode & 0o777).toBe(0o600);

      const db = new Database(dbFile, { readonly: true });
      const { fingerprint } = db.prepare("SELECT fingerprint FROM idempotency_keys WHERE key = 'key-1'").get() as { fingerprint: string };
      const { value } = db.prepare("SELECT value FROM store_keys WHERE name = 'idempotency-fingerprint'").get() as { value: Buffer };
      db.close();
      const request = JSON.stringify(['GET', '/v1/remoteinput', 'artist=A&title=B', '', SECRET]);
      // The attack: hash each dictionary word as the request would carry it; no word matches now.
      expect(fingerprint).not.toBe(createHash('sha256').update(request).digest('hex'));
      expect(fingerprint).toBe(createHmac('sha256', value).update(request).digest('hex'));
      expect(value).toHaveLength(32);
    } finally {
      await t.close();
    }
  });

  it('When a repeat of a stored key carries a wrong secret, then it is 403 Invalid secret (not 422, not the stored answer)', async () => {
    const t = await startTestServer({ config: { secret: SECRET } });
    try {
      const first = await rawRequest(`${t.url}/v1/remoteinput?artist=A&title=B`, { headers: { 'X-SVC-Client-Auth': SECRET, 'Idempotency-Key': 'key-2' } });
      expect(first.status).toBe(200);
      for (const headers of [{ 'X-SVC-Client-Auth': 'wrong' }, {}] as Record<string, string>[]) {
        const repeat = await rawRequest(`${t.url}/v1/remoteinput?artist=A&title=B`, { headers: { ...headers, 'Idempotency-Key': 'key-2' } });
        expect(repeat.status).toBe(403);
        expect(repeat.text).not.toContain('dbid');
      }
    } finally {
      await t.close();
    }
  });
});
