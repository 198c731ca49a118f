import { eventually } from '../../helpers/eventually';
import { postJson } from '../../helpers/http';
import { describeWithPeers } from '../../helpers/peers';
import { startIcecast, startSource, type IcecastServer, type IcecastSource } from '../../helpers/icecast';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// The icecast output (docs/outputs.md "icecast and shoutcast") against a real Icecast 2
// (Debian's icecast2 on its own config and port) with a source streaming to the mount: the title
// is read back from Icecast's own status-json.xsl.

async function eventuallyFailing(server: TestServer, name: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const answer = (await (await fetch(`${server.url}/v1/outputs`)).json()) as {
      outputs: { name: string; state: string; lastError: { message: string } | null }[];
    };
    const output = answer.outputs.find((one) => one.name === name);
    if (output?.state === 'failing' || Date.now() > deadline) {
      expect(output).toMatchObject({ state: 'failing', lastError: { message: 'HTTP 401: You need to authenticate' } });
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describeWithPeers(['icecast2'], 'icecast output on a real Icecast 2', () => {
  let icecast: IcecastServer;
  let source: IcecastSource;
  let server: TestServer;
  beforeAll(async () => {
    icecast = await startIcecast();
    source = await startSource(icecast, '/live');
  });
  afterAll(async () => {
    await server?.close();
    source?.stop();
    await icecast?.close();
  });

  const titleOnIcecast = async (): Promise<unknown> =>
    (await icecast.sources()).find((one) => typeof one.listenurl === 'string' && one.listenurl.endsWith('/live'))?.title;
  const eventuallyTitle = (expected: string): Promise<unknown> => eventually(titleOnIcecast, (title) => title === expected);

  it('When tracks change, then the mount title follows at once ("artist - title", or the title alone), and a wrong password fails (401) without showing it', async () => {
    server = await startTestServer({
      config: {
        outputs: [
          { name: 'stream', type: 'icecast', url: `${icecast.url}/live`, password: icecast.sourcePassword },
          { name: 'wrong', type: 'icecast', url: `${icecast.url}/live`, password: 'not-the-password' },
        ],
      } as never,
      outputPollMs: 50,
    });
    await postJson(`${server.url}/v1/remoteinput`, { artist: 'Daft Punk', title: 'Veridis Quo' });
    expect(await eventuallyTitle('Daft Punk - Veridis Quo')).toBe('Daft Punk - Veridis Quo');
    await eventuallyFailing(server, 'wrong');
    // Only the title known: the title alone, no dangling separator.
    await postJson(`${server.url}/v1/remoteinput`, { title: 'Only A Title' });
    expect(await eventuallyTitle('Only A Title')).toBe('Only A Title');
    const status = await fetch(`${server.url}/v1/outputs`).then(
      async (response) => (await response.json()) as { outputs: { name: string; state: string; lastError: { message: string } | null; target: string }[] },
    );
    const wrong = status.outputs.find((output) => output.name === 'wrong');
    expect(wrong?.target).toBe(`${icecast.url}/live`);
    const text = JSON.stringify(status);
    expect(text).not.toContain(icecast.sourcePassword);
    expect(text).not.toContain('not-the-password');
    expect(server.logs.join('\n')).not.toContain(icecast.sourcePassword);
  });

  it('When a format is configured, then the title follows it, UTF-8 intact', async () => {
    await server.close();
    server = await startTestServer({
      config: {
        outputs: [{ name: 'stream', type: 'icecast', url: `${icecast.url}/live`, password: icecast.sourcePassword, format: '{{title}} by {{artist}}' }],
      } as never,
      outputPollMs: 50,
    });
    await postJson(`${server.url}/v1/remoteinput`, { artist: 'Röyksopp', title: 'Eple & Friends' });
    expect(await eventuallyTitle('Eple & Friends by Röyksopp')).toBe('Eple & Friends by Röyksopp');
  });

  it('When the current track is deleted, then the mount title goes back to the track current again', async () => {
    await postJson(`${server.url}/v1/remoteinput`, { artist: 'Múm', title: 'Green Grass Of Tunnel' });
    expect(await eventuallyTitle('Green Grass Of Tunnel by Múm')).toBe('Green Grass Of Tunnel by Múm');
    const last = (await (await fetch(`${server.url}/v1/last`)).json()) as { dbid: number };
    expect((await fetch(`${server.url}/v1/history/${last.dbid}`, { method: 'DELETE' })).status).toBe(204);
    expect(await eventuallyTitle('Eple & Friends by Röyksopp')).toBe('Eple & Friends by Röyksopp');
  });
});
