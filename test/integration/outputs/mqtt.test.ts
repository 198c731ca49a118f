import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { eventually } from '../../helpers/eventually';
import { clearRetained } from '../../helpers/mqtt-broker';
import { postJson } from '../../helpers/http';
import { serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';
import { makePng } from '../../helpers/images';
import { describeWithPeers, MQTT_TEST_URL } from '../../helpers/peers';
import { startServeProcess, type ServeProcess } from '../../helpers/serve-process';
import { makeTempDir } from '../../helpers/temp-dir';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// The mqtt output (docs/outputs.md "mqtt (and Home Assistant)") on the real Mosquitto broker at 127.0.0.1:1883, under
// a topic prefix of its own per run: the retained now_playing, the status and its last will,
// and Home Assistant's discovery configs (home-assistant.io "MQTT Sensor", "MQTT Image").

const BROKER = MQTT_TEST_URL;

/**
 * The retained message on `topic`, as a fresh subscriber gets it (or undefined). The broker sends
 * a retained message right after its SUBACK, so a marker published after the SUBACK to a topic of
 * our own arrives after it: the marker first means nothing is retained yet, and we ask again.
 */
async function retained(topic: string, accept: (payload: Buffer) => boolean = () => true, timeoutMs = 10_000): Promise<Buffer | undefined> {
  const client = await connectAsync(BROKER, { clientId: `svc-test-read-${randomBytes(4).toString('hex')}` });
  const marker = `svc-test-markers/${randomBytes(6).toString('hex')}`;
  const readOnce = async () => {
    const payload = await new Promise<Buffer | undefined>((resolve) => {
      const onMessage = (from: string, message: Buffer) => {
        client.off('message', onMessage);
        resolve(from === marker ? undefined : message);
      };
      client.on('message', onMessage);
      void client.subscribeAsync(topic, { qos: 1 }).then(() => client.publishAsync(marker, 'marker', { qos: 1 }));
    });
    await client.unsubscribeAsync(topic);
    return payload;
  };
  try {
    await client.subscribeAsync(marker, { qos: 1 });
    return await eventually(readOnce, (payload) => payload !== undefined && accept(payload), timeoutMs);
  } finally {
    await client.endAsync();
  }
}

describeWithPeers(['mosquitto'], 'mqtt output on the real Mosquitto', () => {
  const prefix = `svc-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  const name = `ha-${randomBytes(3).toString('hex')}`;
  // The output's name as it is (Home Assistant takes `-` in a node id), under a discovery prefix of
  // this run's own (discoveryPrefix), so the broker's real `homeassistant/` topics are never touched.
  const node = `svc_${name}`;
  const discovery = `${prefix}-discovery`;
  const cover = makePng(16, 16, [10, 200, 10], [200, 10, 10]);
  let host: ImageHost;
  let server: TestServer;
  let cleaner: MqttClient;

  beforeAll(async () => {
    host = await startImageHost();
    host.route('/cover.png', serveBytes(cover, 'image/png'));
    server = await startTestServer({
      config: {
        coverFetch: { allowPrivateAddresses: true },
        outputs: [{ name, type: 'mqtt', url: BROKER, topic: prefix, homeAssistant: true, discoveryPrefix: discovery }],
      } as never,
      outputPollMs: 50,
    });
  });
  afterAll(async () => {
    await server?.close();
    await host?.close();
    // Retained messages outlive the run: an empty retained message clears each.
    cleaner = await connectAsync(BROKER);
    for (const topic of [
      `${prefix}/now_playing`,
      `${prefix}/status`,
      `${prefix}/cover`,
      `${discovery}/sensor/${node}/now_playing/config`,
      `${discovery}/image/${node}/cover/config`,
    ]) {
      await cleaner.publishAsync(topic, '', { retain: true, qos: 1 });
    }
    await cleaner.endAsync();
    // Each instance's own availability topic (one per svc process).
    await clearRetained(`${prefix}/status/+`);
  });

  it('When a track is submitted, then now_playing is retained JSON, the status reads online, and the cover and discovery configs are there', async () => {
    const answer = await postJson(`${server.url}/v1/remoteinput`, { artist: 'Massive Attack', title: 'Teardrop', coverurl: `${host.url}/cover.png` });
    expect(answer.status).toBe(200);
    // The track is announced at once and again with its cover: wait for the one with the cover.
    const nowPlaying = await retained(
      `${prefix}/now_playing`,
      (payload) => payload.toString('utf8').includes('Teardrop') && payload.toString('utf8').includes('"coverurl"'),
    );
    expect(JSON.parse(nowPlaying?.toString('utf8') ?? '{}')).toMatchObject({
      artist: 'Massive Attack',
      title: 'Teardrop',
      coverurl: expect.stringMatching(/^cover\//),
    });
    expect((await retained(`${prefix}/status`))?.toString('utf8')).toBe('online');
    const coverBytes = await retained(`${prefix}/cover`, (payload) => payload.length > 0);
    expect(coverBytes?.equals(cover)).toBe(true);

    const sensor = JSON.parse((await retained(`${discovery}/sensor/${node}/now_playing/config`))?.toString('utf8') ?? '{}') as Record<string, unknown>;
    expect(sensor).toMatchObject({
      unique_id: `${node}_now_playing`,
      state_topic: `${prefix}/now_playing`,
      json_attributes_topic: `${prefix}/now_playing`,
      // One availability topic per instance, available while any is online (several instances may share the prefix).
      availability: [{ topic: expect.stringMatching(new RegExp(`^${prefix}/status/.+`)), payload_available: 'online', payload_not_available: 'offline' }],
      availability_mode: 'any',
      device: { identifiers: [node] },
    });
    expect(String(sensor.value_template)).toContain('value_json.title');
    // The cover is a PNG: the image entity is told so (Home Assistant reads content_type from its config).
    const image = JSON.parse(
      (await retained(`${discovery}/image/${node}/cover/config`, (payload) => payload.toString('utf8').includes('image/png')))?.toString('utf8') ?? '{}',
    ) as Record<string, unknown>;
    expect(image).toMatchObject({ unique_id: `${node}_cover`, image_topic: `${prefix}/cover`, content_type: 'image/png', device: { identifiers: [node] } });
    expect(image).not.toHaveProperty('url_topic');
  });

  it('When the current track is deleted, then now_playing goes back to the track current again', async () => {
    const second = await postJson(`${server.url}/v1/remoteinput`, { artist: 'Portishead', title: 'Roads' });
    const dbid = Number((second.json as { dbid: number }).dbid);
    expect((await retained(`${prefix}/now_playing`, (payload) => payload.toString('utf8').includes('Roads')))?.toString('utf8')).toContain('Roads');
    expect((await fetch(`${server.url}/v1/history/${dbid}`, { method: 'DELETE' })).status).toBe(204);
    const back = await retained(`${prefix}/now_playing`, (payload) => payload.toString('utf8').includes('Teardrop'));
    expect(JSON.parse(back?.toString('utf8') ?? '{}')).toMatchObject({ artist: 'Massive Attack', title: 'Teardrop' });
  });

  it('When svc stops, then the status reads offline', async () => {
    await server.close();
    expect((await retained(`${prefix}/status`, (payload) => payload.toString('utf8') === 'offline'))?.toString('utf8')).toBe('offline');
  });
});

describeWithPeers(['mosquitto'], 'mqtt output: the last will', () => {
  const prefix = `svc-test-will-${process.pid}-${randomBytes(4).toString('hex')}`;
  let temp: ReturnType<typeof makeTempDir>;
  let instance: ServeProcess | undefined;
  beforeAll(() => {
    temp = makeTempDir();
    fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ outputs: [{ name: 'home', type: 'mqtt', url: BROKER, topic: prefix }] }));
  });
  afterAll(async () => {
    if (instance) {
      instance.child.kill('SIGKILL');
      await instance.exited;
    }
    const cleaner = await connectAsync(BROKER);
    for (const topic of [`${prefix}/now_playing`, `${prefix}/status`]) await cleaner.publishAsync(topic, '', { retain: true, qos: 1 });
    await cleaner.endAsync();
    temp.cleanup();
  });

  const start = () => startServeProcess(['--port', '0', '--db', path.join(temp.dir, 'svc.db'), '--offline'], {}, temp.dir);
  const statusIs = async (expected: string) => (await retained(`${prefix}/status`, (payload) => payload.toString('utf8') === expected))?.toString('utf8');

  it('When svc is killed with -9, then the broker says offline for it (the will), and online again after a restart', async () => {
    instance = await start();
    expect(await statusIs('online')).toBe('online');
    instance.child.kill('SIGKILL');
    await instance.exited;
    // The kernel closes the dead process's socket; the broker then publishes the will.
    expect(await statusIs('offline')).toBe('offline');
    instance = await start();
    expect(await statusIs('online')).toBe('online');
    await postJson(`${instance.url}/v1/remoteinput`, { artist: 'Air', title: "La Femme d'Argent" });
    expect((await retained(`${prefix}/now_playing`, (payload) => payload.toString('utf8').includes('Argent')))?.toString('utf8')).toContain('Air');
  });
});
