import { randomBytes } from 'node:crypto';
import { WebSocket } from 'ws';
import { until } from '../../helpers/eventually';
import { asObject, postJson, request } from '../../helpers/http';
import { startReceiver, type Receiver } from '../../helpers/receiver';
import { openSse } from '../../helpers/sse-client';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { runCli } from '../../helpers/run-cli';

// docs/channels.md "Now playing per channel": two declared channels with different tracks; every
// surface with ?channel= shows that channel's track, the ones without it the first channel's, and an
// output bound to a channel gets only its plays.

const SECRET = 'channels-secret';

type Frame = Record<string, unknown> & { type: string };

/** A socket that keeps every frame; `subscribe` sends svc's push request (the overlay's first message). */
async function openSocket(url: string, subscribe: boolean): Promise<{ frames: Frame[]; close(): void }> {
  const socket = new WebSocket(url);
  const frames: Frame[] = [];
  socket.on('message', (data) => frames.push(JSON.parse((Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer)).toString()) as Frame));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  if (subscribe) socket.send(JSON.stringify({ type: 'subscribe' }));
  return { frames, close: () => socket.close() };
}

/** A channel as the loaded config holds it (testConfig validates strictly: no defaults are filled in). */
export function declaredChannel(
  name: string,
  ingest: { mounts?: string[]; streams?: string[]; aliases?: string[] } = {},
  audience: { url: string; mounts: string[] }[] = [],
) {
  return {
    name,
    ingest: { mounts: [], streams: [], aliases: [], ...ingest },
    audience,
    report: { service: '', category: '', streamId: '', timeZone: '' },
  };
}

const titleOf = (frame: Frame): unknown => (frame.track as Record<string, unknown> | undefined)?.title;

describe('now playing per channel', () => {
  let t: TestServer;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    const whsec = `whsec_${randomBytes(24).toString('base64')}`;
    t = await startTestServer({
      config: {
        secret: SECRET,
        enrichment: { enabled: false },
        channels: [declaredChannel('FM', { aliases: ['studio-a'] }), declaredChannel('Web', { aliases: ['studio-b'] })],
        outputs: [
          { name: 'fm-hook', type: 'webhook', url: `${receiver.url}/fm`, secret: whsec, channel: 'FM' },
          { name: 'all-hook', type: 'webhook', url: `${receiver.url}/all`, secret: whsec },
        ],
      } as never,
      outputPollMs: 50,
    });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  const submit = async (fields: Record<string, unknown>) => {
    const answer = await postJson(`${t.url}/v1/remoteinput`, { secret: SECRET, ...fields });
    expect(answer.status).toBe(200);
    return asObject(answer.json);
  };

  it('When two channels play different tracks, then every surface shows each channel its own and the default surfaces the first channel', async () => {
    const base = t.url.replace(/^http/, 'ws');
    const fmImages = await openSocket(`${base}/v1/images/ws?channel=FM`, true);
    const webImages = await openSocket(`${base}/v1/images/ws?channel=Web`, true);
    const webWnp = await openSocket(`${base}/wsstream?channel=Web&complete=0`, false);
    const fmEvents = await openSse(`${t.url}/v1/events?channel=FM`);
    const webEvents = await openSse(`${t.url}/v1/events?channel=Web`);
    try {
      const fm = await submit({ artist: 'Air', title: 'La Femme d Argent', channel: 'studio-a' });
      const web = await submit({ artist: 'Boards of Canada', title: 'Roygbiv', channel: 'Web' });
      expect(fm.warnings).toBeUndefined();

      const last = async (query: string) => asObject((await request(`${t.url}/v1/last${query}`)).json);
      expect(await last('?channel=FM')).toMatchObject({ dbid: fm.dbid, title: 'La Femme d Argent', channel: 'FM' });
      expect(await last('?channel=Web')).toMatchObject({ dbid: web.dbid, title: 'Roygbiv', channel: 'Web' });
      // An alias names its channel on the reading side too.
      expect(await last('?channel=studio-b')).toMatchObject({ dbid: web.dbid });
      // Without ?channel=: the first declared channel, though Web's track is the newest record.
      expect(await last('')).toMatchObject({ dbid: fm.dbid });

      for (const path of ['/v1/last.txt', '/index.txt']) {
        expect((await request(`${t.url}${path}?channel=Web`)).text).toBe('Boards of Canada - Roygbiv');
        expect((await request(`${t.url}${path}?channel=FM`)).text).toBe('Air - La Femme d Argent');
        expect((await request(`${t.url}${path}`)).text).toBe('Air - La Femme d Argent');
        expect((await request(`${t.url}${path}?channel=Web&format={{title}}`)).text).toBe('Roygbiv');
      }

      await until(() => fmImages.frames.some((frame) => frame.type === 'track' && titleOf(frame) === 'La Femme d Argent'));
      await until(() => webImages.frames.some((frame) => frame.type === 'track' && titleOf(frame) === 'Roygbiv'));
      expect(fmImages.frames.filter((frame) => frame.type === 'track').map(titleOf)).not.toContain('Roygbiv');
      expect(webImages.frames.filter((frame) => frame.type === 'track').map(titleOf)).not.toContain('La Femme d Argent');
      await until(() => webWnp.frames.some((frame) => frame.title === 'Roygbiv'));
      expect(webWnp.frames.map((frame) => frame.title)).not.toContain('La Femme d Argent');

      const fmEvent = JSON.parse((await fmEvents.next()).data) as Record<string, unknown>;
      const webEvent = JSON.parse((await webEvents.next()).data) as Record<string, unknown>;
      expect(fmEvent).toMatchObject({ dbid: fm.dbid, channel: 'FM' });
      expect(webEvent).toMatchObject({ dbid: web.dbid, channel: 'Web' });

      // The bound output got FM's play only; the unbound one both (each after its settle).
      await receiver.waitFor(3, 20_000);
      await until(() => receiver.received.filter((one) => one.path === '/all').length === 2);
      const fmBodies = receiver.received.filter((one) => one.path === '/fm').map((one) => JSON.parse(one.body.toString()) as Record<string, unknown>);
      expect(fmBodies.map((body) => (body.data as Record<string, unknown>).dbid)).toEqual([fm.dbid]);
    } finally {
      fmImages.close();
      webImages.close();
      webWnp.close();
      fmEvents.close();
      webEvents.close();
    }
  });

  it("When svc last, history and watch-images are asked for a channel, then they print that channel's tracks", async () => {
    const env = { SVC_URL: t.url, SVC_SECRET: SECRET };
    const web = await runCli(['last', '--channel', 'Web', '--format', '{artist} - {title}'], { env });
    expect(web.stdout.trim()).toBe('Boards of Canada - Roygbiv');
    const fm = await runCli(['last', '--channel', 'FM', '--json'], { env });
    expect(JSON.parse(fm.stdout)).toMatchObject({ channel: 'FM', title: 'La Femme d Argent' });
    const history = await runCli(['history', '--channel', 'Web', '--json'], { env });
    const lines = history.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => line.channel)).toEqual(lines.map(() => 'Web'));
    expect(lines.map((line) => line.title)).toContain('Roygbiv');
    const unknown = await runCli(['last', '--channel', 'AM'], { env });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/"AM" is not a declared channel/);
  });

  it('When a reader names an undeclared channel, then it gets a 400 naming the declared ones, on the HTTP and the WebSocket paths', async () => {
    const answer = await request(`${t.url}/v1/last?channel=AM`);
    expect(answer.status).toBe(400);
    expect(asObject(answer.json).error).toMatch(/"AM" is not a declared channel \(FM, Web\)/);
    expect((await request(`${t.url}/v1/last?channel=FM&channel=Web`)).status).toBe(400);
    const refused = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`${t.url.replace(/^http/, 'ws')}/wsstream?channel=AM`);
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.on('error', () => undefined);
    });
    expect(refused).toBe(400);
  });

  it('When a submission names an undeclared channel, then the answer and the log warn, and it never joins a declared channel', async () => {
    const answer = await submit({ artist: 'X', title: 'Y', channel: '/unknown.ogg' });
    expect(answer.warnings).toEqual([expect.stringMatching(/channel "\/unknown\.ogg" is not declared \(channels: "FM", "Web"\)/)]);
    expect(t.logs.some((line) => line.includes('"/unknown.ogg" is not declared'))).toBe(true);
    expect(asObject((await request(`${t.url}/v1/last?channel=FM`)).json).title).toBe('La Femme d Argent');
  });

  it("When the same artist and title arrive on another channel, then it is a new play there, not the other channel's play again", async () => {
    // FM's play is the newest record of all: the one a global "current track" would compare with.
    const fmNow = await submit({ artist: 'Air', title: 'Kelly Watch the Stars', channel: 'FM' });
    const again = await submit({ artist: 'Air', title: 'Kelly Watch the Stars', channel: 'Web' });
    expect(again.dbid).not.toBe(fmNow.dbid);
    expect(asObject((await request(`${t.url}/v1/last?channel=Web`)).json)).toMatchObject({ dbid: again.dbid, channel: 'Web' });
    // On its own channel, the same track twice is still the same play (docs/title-first.md).
    const repeat = await submit({ artist: 'Air', title: 'Kelly Watch the Stars', channel: 'Web' });
    expect(repeat.dbid).toBe(again.dbid);
  });

  it('When a channel is on air with no audience source, then /v1/status names it', async () => {
    const status = asObject((await request(`${t.url}/v1/status`)).json);
    expect(status.unheard_channels).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ channel: 'FM', problem: expect.stringContaining('no audience source') }),
        expect.objectContaining({ channel: 'Web' }),
      ]),
    );
    const cli = await runCli(['status'], { env: { SVC_URL: t.url } });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/unheard channel "FM": on air with no audience source/);
  });

  it("When the end of a play names a channel by its alias, then that channel's play ends", async () => {
    const web = asObject((await request(`${t.url}/v1/last?channel=Web`)).json);
    const ended = await postJson(`${t.url}/v1/remoteinput/end`, { secret: SECRET, channel: 'studio-b' });
    expect(ended.status).toBe(200);
    expect(ended.json).toEqual({ channel: 'Web', dbid: web.dbid });
    expect(asObject((await request(`${t.url}/v1/last?channel=Web`)).json).end_reason).toBe('explicit');
  });
});
