import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { rawRequest } from '../../helpers/raw-http';
import { makeTempDir } from '../../helpers/temp-dir';
import { startTestServer, testConfig } from '../../helpers/test-server';

// Round three's smaller findings (docs/security.md "Smaller doors"): CONNECT closed without an
// answer; U+2028, U+2029 and U+202E passed through one-line text; a symlink in staticDir to a
// hidden file was served; a discord output took an http:// URL. Host parsing and mount aliases
// have their own files (host-check.test.ts, icecast-port.test.ts).

describe('smaller doors', () => {
  const temp = makeTempDir('svc-doors-');
  afterAll(() => temp.cleanup());

  it('When a client sends CONNECT, then it gets a JSON 405 and the connection closes', async () => {
    const t = await startTestServer();
    try {
      const { port } = new URL(t.url);
      const answer = await new Promise<string>((resolve) => {
        const socket = net.connect(Number(port), '127.0.0.1', () => socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'));
        let received = '';
        socket.on('data', (piece: Buffer) => (received += piece.toString('latin1')));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(received));
      });
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 405 Method Not Allowed');
      expect(answer).toContain('{"error":"CONNECT is not allowed"}');
    } finally {
      await t.close();
    }
  });

  it('When a title carries U+2028, U+2029 and U+202E, then /v1/last.txt is one line without them', async () => {
    const t = await startTestServer();
    try {
      await rawRequest(`${t.url}/v1/remoteinput`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ artist: 'A\u2028B', title: '\u202eeltiT\u2029Next' }),
      });
      const text = await rawRequest(`${t.url}/v1/last.txt`);
      expect(text.text).toBe('A B - eltiT Next');
      expect(text.text).not.toMatch(/[\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
    } finally {
      await t.close();
    }
  });

  it('When staticDir holds a symlink to a hidden file or into a hidden folder, then it is 404 and the file is not sent', async () => {
    const dir = path.join(temp.dir, 'static');
    fs.mkdirSync(path.join(dir, '.private'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.env'), 'SVC_SECRET=hunter2');
    fs.writeFileSync(path.join(dir, '.private', 'key.txt'), 'private');
    fs.writeFileSync(path.join(dir, 'ok.txt'), 'fine');
    fs.symlinkSync('.env', path.join(dir, 'innocent.txt'));
    fs.symlinkSync(path.join('.private', 'key.txt'), path.join(dir, 'key.txt'));
    fs.symlinkSync('ok.txt', path.join(dir, 'alias.txt'));
    const t = await startTestServer({ config: { staticDir: dir } });
    try {
      for (const name of ['innocent.txt', 'key.txt']) {
        const answer = await rawRequest(`${t.url}/static/${name}`);
        expect(answer.status).toBe(404);
        expect(answer.text).not.toMatch(/hunter2|private/);
      }
      // A symlink to a visible file in the folder is still served.
      expect((await rawRequest(`${t.url}/static/alias.txt`)).text).toBe('fine');
    } finally {
      await t.close();
    }
  });

  it('When a discord output has an http:// URL, then the config is refused (loopback, for a local relay, is allowed)', () => {
    const discord = (url: string) => testConfig({ outputs: [{ name: 'chat', type: 'discord', url }] } as never, ':memory:');
    expect(() => discord('http://discord.com/api/webhooks/1/token')).toThrow(/a discord output needs an https:\/\/ URL/);
    expect(() => discord('https://discord.com/api/webhooks/1/token')).not.toThrow();
    expect(() => discord('http://127.0.0.1:9/api/webhooks/1/token')).not.toThrow();
  });
});
