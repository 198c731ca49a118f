import { randomBytes } from 'node:crypto';
import { connectAsync, type MqttClient } from 'mqtt';
import { startDiscordFake, type DiscordFake } from '../../fakes/discord';
import { eventually } from '../../helpers/eventually';
import { asObject, postJson } from '../../helpers/http';
import { startIcecast, startSource, type IcecastServer, type IcecastSource } from '../../helpers/icecast';
import { afterDelay, serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';
import { makePng } from '../../helpers/images';
import { BROKER, clearRetained } from '../../helpers/mqtt-broker';
import { describeWithPeers } from '../../helpers/peers';
import { startReceiver, type Receiver } from '../../helpers/receiver';
import { runCli } from '../../helpers/run-cli';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/decisions.md "Delivery promises", end to end: a webhook, Discord (the fake), the real
// Mosquitto and the real icecast2. Outputs get their messages in dbid order, a record still
// being enriched holds only the ones behind it, current-state targets never go back to an older
// record, and an Icecast mount without a source is retried until it has one.

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;

interface OutputRow {
  name: string;
  state: string;
  pending: number;
  superseded: number;
  lastSuccess: { dbid: number } | null;
  lastError: { message: string } | null;
}

const outputsOf = async (server: TestServer): Promise<OutputRow[]> =>
  ((await (await fetch(`${server.url}/v1/outputs`)).json()) as { outputs: OutputRow[] }).outputs;
const outputNamed = async (server: TestServer, name: string): Promise<OutputRow | undefined> => (await outputsOf(server)).find((one) => one.name === name);

const submit = (server: TestServer, fields: Record<string, string>) => postJson(`${server.url}/v1/remoteinput`, fields);

async function titleOf(icecast: IcecastServer, mount: string): Promise<unknown> {
  return (await icecast.sources()).find((one) => typeof one.listenurl === 'string' && one.listenurl.endsWith(mount))?.title;
}

describeWithPeers(['mosquitto', 'icecast2'], 'three tracks, the first with a slow cover', () => {
  const prefix = `svc-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  let host: ImageHost;
  let receiver: Receiver;
  let discord: DiscordFake;
  let icecast: IcecastServer;
  let source: IcecastSource;
  let watcher: MqttClient;
  let server: TestServer;
  const nowPlaying: number[] = [];

  beforeAll(async () => {
    host = await startImageHost();
    host.route('/slow.png', afterDelay(3000, serveBytes(makePng(8, 8, [1, 2, 3], [4, 5, 6]), 'image/png')));
    [receiver, discord, icecast] = await Promise.all([startReceiver(), startDiscordFake(), startIcecast()]);
    source = await startSource(icecast, '/live');
    watcher = await connectAsync(BROKER, { clientId: `svc-test-watch-${randomBytes(4).toString('hex')}` });
    watcher.on('message', (_topic, payload) => {
      const text = payload.toString('utf8');
      if (text.startsWith('{"dbid"')) nowPlaying.push(Number((JSON.parse(text) as { dbid: number }).dbid));
    });
    await watcher.subscribeAsync(`${prefix}/now_playing`, { qos: 1 });
    const outputs = [
      { name: 'hook', type: 'webhook', url: `${receiver.url}/hook`, secret: SECRET },
      { name: 'discord', type: 'discord', url: discord.webhookUrl },
      { name: 'now', type: 'mqtt', url: BROKER, topic: prefix },
      { name: 'stream', type: 'icecast', url: `${icecast.url}/live`, password: icecast.sourcePassword },
    ];
    server = await startTestServer({ config: { coverFetch: { allowPrivateAddresses: true }, outputs } as never, outputPollMs: 50 });
  });
  afterAll(async () => {
    await server?.close();
    await watcher?.endAsync();
    source?.stop();
    await Promise.all([host?.close(), receiver?.close(), discord?.close(), icecast?.close()]);
    await clearRetained(`${prefix}/#`);
  });

  it('When the first is still being enriched as the others come, then every output gets them in dbid order and the current-state targets end on the third', async () => {
    const first = submit(server, { artist: 'A', title: 'One', coverurl: `${host.url}/slow.png` });
    await eventually(
      async () => asObject(await (await fetch(`${server.url}/v1/last`)).json()).title,
      (title) => title === 'One',
    );
    const second = Number(asObject((await submit(server, { artist: 'A', title: 'Two' })).json).dbid);
    const third = Number(asObject((await submit(server, { artist: 'A', title: 'Three' })).json).dbid);
    const firstDbid = Number(asObject((await first).json).dbid);
    expect([firstDbid, second, third]).toEqual([firstDbid, firstDbid + 1, firstDbid + 2]);

    // The webhook: all three, in dbid order, the first with its cover (it held the other two).
    const hooks = (await receiver.waitFor(3, 20_000)).map((one) => (JSON.parse(one.body.toString('utf8')) as { data: Record<string, unknown> }).data);
    expect(hooks.map((data) => data.dbid)).toEqual([firstDbid, second, third]);
    expect(hooks[0]?.coverurl).toEqual(expect.stringMatching(/^cover\//));

    // The first record's late end of enrichment reached the current-state targets as superseded, never shown.
    const settledNow = await eventually(
      () => outputNamed(server, 'now'),
      (now) => now?.pending === 0 && (now?.superseded ?? 0) >= 1,
    );
    expect(settledNow).toMatchObject({ pending: 0, lastSuccess: { dbid: third } });
    expect(settledNow?.superseded).toBeGreaterThanOrEqual(1);
    const sequence = [...nowPlaying];
    expect(sequence.at(-1)).toBe(third);
    expect(sequence).toEqual([...sequence].sort((a, b) => a - b));

    expect(
      await eventually(
        () => titleOf(icecast, '/live'),
        (title) => title === 'A - Three',
      ),
    ).toBe('A - Three');
    const posted = await eventually(
      async () => discord.posted.map((message) => message.embeds[0]?.title),
      (titles) => titles.at(-1) === 'Three',
    );
    expect(posted.at(-1)).toBe('Three');
    expect(posted.filter((title) => title !== 'Three')).toEqual(['One', 'Two'].filter((title) => posted.includes(title)));
    const discordRow = await outputNamed(server, 'discord');
    expect(discordRow).toMatchObject({ pending: 0, lastSuccess: { dbid: third } });
  }, 40_000);
});

describeWithPeers(['icecast2'], 'an Icecast mount whose source connects later', () => {
  let icecast: IcecastServer;
  let source: IcecastSource | undefined;
  let server: TestServer;
  beforeAll(async () => {
    icecast = await startIcecast();
    server = await startTestServer({
      config: { outputs: [{ name: 'stream', type: 'icecast', url: `${icecast.url}/live`, password: icecast.sourcePassword }] } as never,
      outputPollMs: 50,
    });
  });
  afterAll(async () => {
    await server?.close();
    source?.stop();
    await icecast?.close();
  });

  it("When a track comes before the source, then the title is retried with Icecast's reason, set once the source is live, and the output reads ok", async () => {
    await submit(server, { artist: 'Boot', title: 'Order' });
    const waiting = await eventually(
      () => outputNamed(server, 'stream'),
      (row) => row?.state === 'retrying',
    );
    expect(waiting).toMatchObject({ state: 'retrying', pending: 1, lastError: { message: 'HTTP 400: Source does not exist' } });
    // The DJ connects after the first attempt failed: no new track is needed.
    source = await startSource(icecast, '/live');
    expect(
      await eventually(
        () => titleOf(icecast, '/live'),
        (title) => title === 'Boot - Order',
        20_000,
      ),
    ).toBe('Boot - Order');
    const after = await eventually(
      () => outputNamed(server, 'stream'),
      (row) => row?.state === 'ok' && row.pending === 0,
    );
    expect(after).toMatchObject({ state: 'ok', pending: 0, lastError: { message: 'HTTP 400: Source does not exist' } });
    const table = await runCli(['outputs', '--url', server.url]);
    expect(table.stdout).toMatch(/^stream\s+icecast\s+ok\s+0\s+0\s/m);
    expect(table.stdout).toContain('HTTP 400: Source does not exist');
  }, 40_000);
});

describe('a failing output and svc outputs test', () => {
  it('When a message failed for good and a test then delivers, then the output reads ok again', async () => {
    const receiver = await startReceiver();
    const server = await startTestServer({
      config: { outputs: [{ name: 'hook', type: 'webhook', url: `${receiver.url}/hook`, secret: SECRET }] } as never,
      outputPollMs: 50,
    });
    try {
      receiver.script({ status: 400, body: 'no' });
      await submit(server, { artist: 'A', title: 'Refused' });
      expect(
        await eventually(
          () => outputNamed(server, 'hook'),
          (row) => row?.state === 'failing',
        ),
      ).toMatchObject({ state: 'failing' });
      const test = await runCli(['outputs', 'test', 'hook', '--url', server.url]);
      expect(test.code).toBe(0);
      expect(await outputNamed(server, 'hook')).toMatchObject({ state: 'ok', lastError: { message: 'HTTP 400' } });
    } finally {
      await server.close();
      await receiver.close();
    }
  });
});
