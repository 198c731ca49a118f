import { randomBytes } from 'node:crypto';
import { eventually } from '../helpers/eventually';
import { postJson, request } from '../helpers/http';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { runCli } from '../helpers/run-cli';
import { startTestServer, type TestServer } from '../helpers/test-server';

// `svc outputs [--json]` and `svc outputs test NAME` (docs/outputs.md "CLI") against a real server
// whose outputs are a working webhook receiver and a target that refuses connections.

const SECRET = 'cli-outputs-secret';
const SIGNING = `whsec_${randomBytes(24).toString('base64')}`;

describe('svc outputs', () => {
  let receiver: Receiver;
  let server: TestServer;
  beforeAll(async () => {
    receiver = await startReceiver();
    const closed = await startReceiver();
    await closed.close();
    server = await startTestServer({
      config: {
        secret: SECRET,
        outputs: [
          { name: 'hook', type: 'webhook', url: `${receiver.url}/in?token=tok-${SECRET.length}xyz`, secret: SIGNING },
          { name: 'down', type: 'webhook', url: closed.url, secret: SIGNING },
        ],
      } as never,
      outputPollMs: 50,
    });
    await postJson(`${server.url}/v1/remoteinput`, { artist: 'Artist', title: 'Song' }, { 'X-SVC-Client-Auth': SECRET });
    await receiver.waitFor(1);
    // The refused target has been tried once (its error is what the table shows).
    await eventually(
      () => request(`${server.url}/v1/outputs`, { headers: { 'X-SVC-Client-Auth': SECRET } }),
      (answer) => JSON.stringify(answer.json).includes('connection refused'),
    );
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });
  test('When outputs are listed, then a table shows each one with its state, and no secret, token or URL path', async () => {
    const result = await runCli(['outputs', '--url', server.url, '--secret', SECRET]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+TYPE\s+STATE\s+PENDING\s+SUPERSEDED\s+LAST SUCCESS\s+LAST ERROR$/);
    expect(lines[1]).toMatch(/^hook\s+webhook\s+ok\s+0\s+0\s+\S+Z \(dbid 1\)\s+-$/);
    expect(lines[2]).toMatch(/^down\s+webhook\s+retrying\s+1\s+0\s+-\s+\S+Z connection refused$/);
    for (const secret of [SIGNING, SIGNING.slice(6), 'xyz', SECRET]) expect(result.stdout).not.toContain(secret);
  });

  test('When --json is given, then it prints the /v1/outputs object', async () => {
    const result = await runCli(['outputs', '--json', '--url', server.url, '--secret', SECRET]);
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout) as { outputs: { name: string; target: string }[] };
    expect(parsed.outputs.map((output) => output.name)).toEqual(['hook', 'down']);
    expect(parsed.outputs[0]?.target).toBe(`http://127.0.0.1:${receiver.port}/…`);
  });

  test('When the secret is wrong, then it exits 3', async () => {
    const result = await runCli(['outputs', '--url', server.url, '--secret', 'wrong']);
    expect(result.code).toBe(3);
  });

  test('When an output is tested, then the current track is sent to it now and the result printed; a down one exits 1 and says why', async () => {
    const before = receiver.received.length;
    const ok = await runCli(['outputs', 'test', 'hook', '--url', server.url, '--secret', SECRET]);
    expect(ok).toMatchObject({ code: 0, stderr: '' });
    expect(ok.stdout).toMatch(/^hook: delivered \(HTTP 200\) in \d+ ms\n$/);
    expect(receiver.received.length).toBe(before + 1);
    expect(JSON.parse(receiver.received[before].body.toString('utf8'))).toMatchObject({ type: 'track.changed', data: { title: 'Song' } });
    const down = await runCli(['outputs', 'test', 'down', '--url', server.url, '--secret', SECRET]);
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(/^down: retry: connection refused in \d+ ms\n$/);
    const missing = await runCli(['outputs', 'test', 'nope', '--url', server.url, '--secret', SECRET]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("No output named 'nope'");
    expect(missing.stderr).not.toContain('is this an svc server');
  });
});
