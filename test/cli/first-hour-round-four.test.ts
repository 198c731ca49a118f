import { runCli } from '../helpers/run-cli';
import { startTestServer, type TestServer } from '../helpers/test-server';

// Issue 52's smaller traps, each run as a newcomer would type the command.

describe('svc report against a server with no secret', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it("When the server has no secret, then the message points at the server's settings, not the client's", async () => {
    const result = await runCli(['report', 'bmi', '--from', '2026-03-01', '--to', '2026-03-01', '--url', t.url, '--secret', 'anything']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("the server has none: set secret in the server's config (or start it with --secret or SVC_SECRET), then restart it");
    expect(result.stderr).not.toContain('client.secret');
  });
});
