import { eventually } from '../../helpers/eventually';
import { postJson } from '../../helpers/http';
import { describeWithPeers } from '../../helpers/peers';
import { startIcecast, startShoutcastSource, type IcecastServer, type IcecastSource } from '../../helpers/icecast';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// The shoutcast output (docs/outputs.md "icecast and shoutcast") against a real server that
// speaks SHOUTcast 1: Icecast 2 with a Shoutcast-compatible listen socket, a SHOUTcast 1 source
// streaming to it, and `GET /admin.cgi?mode=updinfo&pass=…&song=…` setting that stream's title
// with the source password in `pass`, as on a SHOUTcast 1 DNAS. There is no SHOUTcast DNAS in
// Debian; Icecast is the peer that runs here. The title is read back from its status-json.xsl.

type OutputsAnswer = { outputs: { name: string; state: string; lastError: { message: string } | null; target: string }[] };

describeWithPeers(['icecast2'], 'shoutcast output on a real server (Icecast 2 /admin.cgi)', () => {
  let icecast: IcecastServer;
  let source: IcecastSource;
  let server: TestServer;
  beforeAll(async () => {
    icecast = await startIcecast({ shoutcastCompat: true });
    source = await startShoutcastSource(icecast);
  });
  afterAll(async () => {
    await server?.close();
    source?.stop();
    await icecast?.close();
  });

  const titleOnServer = async (): Promise<unknown> =>
    (await icecast.sources()).find((one) => typeof one.listenurl === 'string' && one.listenurl.endsWith('/stream'))?.title;

  it('When tracks change, then the stream title follows; a wrong password fails the output without showing it', async () => {
    server = await startTestServer({
      config: {
        outputs: [
          { name: 'radio', type: 'shoutcast', url: icecast.url, password: icecast.sourcePassword },
          { name: 'wrong', type: 'shoutcast', url: icecast.url, password: 'not-the-password' },
        ],
      } as never,
      outputPollMs: 50,
    });
    await postJson(`${server.url}/v1/remoteinput`, { artist: 'Boards of Canada', title: 'Roygbiv' });
    expect(await eventually(titleOnServer, (title) => title === 'Boards of Canada - Roygbiv')).toBe('Boards of Canada - Roygbiv');
    await postJson(`${server.url}/v1/remoteinput`, { artist: 'Aphex Twin', title: 'Xtal' });
    expect(await eventually(titleOnServer, (title) => title === 'Aphex Twin - Xtal')).toBe('Aphex Twin - Xtal');
    const readStatus = async () => (await (await fetch(`${server.url}/v1/outputs`)).json()) as OutputsAnswer;
    const status = await eventually(readStatus, (answer) => answer.outputs.find((one) => one.name === 'wrong')?.state === 'failing');
    const wrong = status.outputs.find((one) => one.name === 'wrong');
    expect(wrong).toMatchObject({ state: 'failing', lastError: { message: expect.stringMatching(/^HTTP 4\d\d$/) } });
    expect(status.outputs.find((one) => one.name === 'radio')?.state).toBe('ok');
    const text = JSON.stringify(status) + server.logs.join('\n');
    expect(text).not.toContain(icecast.sourcePassword);
    expect(text).not.toContain('not-the-password');
  });
});
