import { runCli } from '../helpers/run-cli';
import { startTestServer, type TestServer } from '../helpers/test-server';

// `svc requests` (docs/song-requests.md "On the setlist page and in the terminal"; docs/cli.md) against a real server with a
// secret: add by names and by chat text, list as a table and as JSON, remove one, clear.

const SECRET = 'cli-requests-secret';

describe('svc requests', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ config: { secret: SECRET } });
  });
  afterAll(async () => {
    await server.close();
  });
  const svc = (...args: string[]) => runCli([...args, '--url', server.url, '--secret', SECRET]);

  it('When requests are added, listed, removed and cleared, then each command says so and the queue follows', async () => {
    const added = await svc('requests', 'add', '--requester', 'viewer1', '--artist', 'Radiohead', '--title', 'Creep');
    expect(added.stdout).toBe('queued #1: Radiohead - Creep (for viewer1)\n');
    expect(added.code).toBe(0);
    expect((await svc('requests', 'add', '--requester', 'viewer2', 'Nirvana - Breed')).stdout).toBe('queued #2: Nirvana - Breed (for viewer2)\n');
    expect((await svc('requests', 'add', '--requester', 'viewer1', '--artist', 'radiohead', '--title', 'creep')).stdout).toMatch(/already queued #1/);
    const table = (await svc('requests')).stdout.split('\n');
    expect(table[0]).toMatch(/^ID\s+REQUESTER\s+ARTIST\s+TITLE\s+PLATFORM\s+SINCE$/);
    expect(table[1]).toMatch(/^1\s+viewer1\s+Radiohead\s+Creep\s+-\s+\d{4}-/);
    expect(table[2]).toMatch(/^2\s+viewer2\s+Nirvana\s+Breed/);
    const listed = JSON.parse((await svc('requests', 'list', '--json')).stdout) as { requests: { request_id: number }[] };
    expect(listed.requests.map((item) => item.request_id)).toEqual([1, 2]);
    expect((await svc('requests', 'remove', '1')).stdout).toBe('removed 1 request(s)\n');
    expect((await svc('requests', 'clear')).stdout).toBe('queue cleared\n');
    expect((await svc('requests')).stdout).toBe('no requests queued\n');
  });

  it('When the secret is wrong or nothing is asked for, then the command fails with a message on stderr', async () => {
    const refused = await runCli(['requests', '--url', server.url, '--secret', 'wrong']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/403|Invalid secret/);
    const empty = await svc('requests', 'add', '--requester', 'viewer1');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/nothing to request/);
  });
});
