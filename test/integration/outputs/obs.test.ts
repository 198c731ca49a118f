import fs from 'node:fs';
import path from 'node:path';
import { OBSWebSocket } from 'obs-websocket-js/json';
import { eventually } from '../../helpers/eventually';
import { asObject, postJson, request } from '../../helpers/http';
import { runCli } from '../../helpers/run-cli';
import { serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';
import { makePng } from '../../helpers/images';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { startObsFake, type ObsFake } from '../../fakes/obs-websocket';
import { makeTempDir } from '../../helpers/temp-dir';

// The obs output (docs/outputs.md "obs: a Text source in OBS Studio") against a fake of OBS's
// WebSocket server built from obs-websocket's protocol document (test/fakes/obs-websocket.ts),
// first checked with the npm obs-websocket-js client: the Text source follows three track
// changes and an OBS restart, the Image source gets the cover, and a wrong password is what
// `svc outputs` says. test/integration/outputs/obs-studio.test.ts does the same on the real OBS
// Studio when it can run here.

describe('the OBS fake answers as obs-websocket does', () => {
  let obs: ObsFake;
  beforeAll(async () => {
    obs = await startObsFake();
  });
  afterAll(async () => {
    await obs.close();
  });

  it('When obs-websocket-js identifies with the password and sets a Text source, then it reads the text back; a wrong password closes with 4009', async () => {
    const client = new OBSWebSocket();
    const { negotiatedRpcVersion } = await client.connect(obs.url, obs.password);
    expect(negotiatedRpcVersion).toBe(1);
    await client.call('SetInputSettings', { inputName: 'Now Playing', inputSettings: { text: 'from obs-websocket-js' } });
    const { inputSettings } = await client.call('GetInputSettings', { inputName: 'Now Playing' });
    expect(inputSettings).toMatchObject({ text: 'from obs-websocket-js', font: { face: 'Sans' } });
    await expect(client.call('SetInputSettings', { inputName: 'Nope', inputSettings: { text: 'x' } })).rejects.toMatchObject({ code: 600 });
    await client.disconnect();
    const wrong = new OBSWebSocket();
    await expect(wrong.connect(obs.url, 'not-the-password')).rejects.toMatchObject({ code: 4009 });
  });
});

describe('obs output', () => {
  let obs: ObsFake;
  let host: ImageHost;
  let server: TestServer;
  let coverPath: string;
  const temp = makeTempDir();
  const cover = makePng(16, 16, [10, 200, 10], [200, 10, 10]);
  beforeAll(async () => {
    obs = await startObsFake();
    host = await startImageHost();
    host.route('/cover.png', serveBytes(cover, 'image/png'));
  });
  afterAll(async () => {
    await server?.close();
    await host?.close();
    await obs?.close();
    temp.cleanup();
  });

  const textShown = () => Promise.resolve(String(obs.inputs.get('Now Playing')?.settings.text));
  const outputs = async () =>
    asObject((await request(`${server.url}/v1/outputs`)).json).outputs as { name: string; state: string; lastError: { message: string } | null }[];

  it("When three tracks change and OBS restarts, then the Text source follows each, the cover is the Image source's file, and a wrong password shows in svc outputs", async () => {
    coverPath = path.join(temp.dir, 'cover-for-obs');
    server = await startTestServer({
      config: {
        coverFetch: { allowPrivateAddresses: true },
        outputs: [
          { name: 'obs', type: 'obs', url: obs.url, password: obs.password, input: 'Now Playing', imageInput: 'Cover', imagePath: coverPath },
          { name: 'obs-wrong', type: 'obs', url: obs.url, password: 'not-the-password', input: 'Now Playing' },
        ],
      } as never,
      outputPollMs: 50,
    });

    for (const [artist, title] of [
      ['Massive Attack', 'Teardrop'],
      ['Portishead', 'Roads'],
      ['Björk', 'Jóga'],
    ] as const) {
      await postJson(`${server.url}/v1/remoteinput`, { artist, title, ...(title === 'Roads' ? { coverurl: `${host.url}/cover.png` } : {}) });
      expect(await eventually(textShown, (text) => text === `${artist} - ${title}`)).toBe(`${artist} - ${title}`);
      if (title === 'Roads') {
        const file = await eventually(
          () => Promise.resolve(String(obs.inputs.get('Cover')?.settings.file)),
          (value) => value === coverPath,
        );
        expect(file).toBe(coverPath);
        expect(fs.readFileSync(coverPath).equals(cover)).toBe(true);
      }
    }

    // OBS quits; a track changes while it is away; it comes back on the same port.
    const restarting = obs.restart(1500);
    await postJson(`${server.url}/v1/remoteinput`, { artist: 'Air', title: 'La Femme d’Argent' });
    await restarting;
    expect(await eventually(textShown, (text) => text === 'Air - La Femme d’Argent', 20_000)).toBe('Air - La Femme d’Argent');

    const list = await eventually(outputs, (all) => all.find((one) => one.name === 'obs-wrong')?.state === 'failing');
    expect(list.find((one) => one.name === 'obs-wrong')?.lastError?.message).toMatch(/^OBS refused the password \(close code 4009\)/);
    expect(list.find((one) => one.name === 'obs')).toMatchObject({ state: 'ok' });
    expect(JSON.stringify(list)).not.toContain(obs.password);

    const table = await runCli(['outputs', '--url', server.url]);
    expect(table.stdout).toMatch(/obs-wrong\s+obs\s+failing\s+\d+\s+.*OBS refused the password/);
    expect(table.stdout).toMatch(/^obs\s+obs\s+ok\s+0\s+\d+\s+\S+ \(dbid \d+\) Now Playing: Air - La Femme d’Argent/m);
  });
});
