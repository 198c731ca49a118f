import { startDiscordFake, type DiscordFake } from '../../fakes/discord';
import { asObject, postJson, request } from '../../helpers/http';
import { serveBytes, startImageHost, type ImageHost } from '../../helpers/image-host';
import { makePng } from '../../helpers/images';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { until } from '../../helpers/eventually';
import { expectNothingBefore, manualClock, type ManualClock } from '../../helpers/manual-clock';

// The discord output (docs/outputs.md "discord") against a fake built from Discord's own API
// documentation (test/fakes/discord.ts): a 429's retry_after waited out, the embed within the
// limits, the cover uploaded as an attachment, the message id as the receipt, newest only when behind.

describe('discord output', () => {
  let discord: DiscordFake;
  let host: ImageHost;
  let server: TestServer;
  let clock: ManualClock;
  const cover = makePng(32, 32, [200, 40, 40], [40, 40, 200]);

  beforeEach(async () => {
    discord = await startDiscordFake();
    host = await startImageHost();
    host.route('/cover.png', serveBytes(cover, 'image/png'));
    clock = manualClock();
    server = await startTestServer({
      outputClock: clock.now,
      config: { coverFetch: { allowPrivateAddresses: true }, outputs: [{ name: 'channel', type: 'discord', url: discord.webhookUrl }] } as never,
      outputPollMs: 50,
    });
  });
  afterEach(async () => {
    await server.close();
    await host.close();
    await discord.close();
  });

  it('When Discord answers 429 with retry_after, then the post waits it out; the 300-character title is cut to 256, the cover is an attachment, the message id is the receipt', async () => {
    discord.rateLimit(1, 1.5);
    const title = 'T'.repeat(300);
    const limitedAt = clock.at;
    const answer = await postJson(`${server.url}/v1/remoteinput`, { artist: 'Artist', title, album: 'Album', year: '1999', coverurl: `${host.url}/cover.png` });
    expect(answer.status).toBe(200);
    await until(() => discord.requests.length === 1);
    // On the queues' clock: nothing before the wait named (the larger of the body's retry_after,
    // 1.5 s, and the Retry-After header's whole seconds, 2 s), then the post.
    await expectNothingBefore(clock, limitedAt + 2000, () => discord.requests.length);
    await until(() => discord.posted.length === 1);
    const [limited, accepted] = discord.requests;
    expect([limited?.status, accepted?.status]).toEqual([429, 200]);

    const [message] = discord.posted;
    const embed = message.embeds[0];
    expect([...(embed.title ?? '')]).toHaveLength(256);
    expect(embed.title).toBe(`${'T'.repeat(255)}…`);
    expect(embed).toMatchObject({ author: { name: 'Artist' }, description: 'Album · 1999', image: { url: 'attachment://cover.png' } });
    expect(message.files).toHaveLength(1);
    expect(message.files[0]).toMatchObject({ field: 'files[0]', filename: 'cover.png', contentType: 'image/png' });
    expect(message.files[0].bytes.equals(cover)).toBe(true);
    expect(message.attachments).toEqual([{ id: 0, filename: 'cover.png' }]);
    expect(message.allowedMentions).toEqual({ parse: [] });

    const status = asObject((asObject((await request(`${server.url}/v1/outputs`)).json).outputs as unknown[])[0]);
    expect(status).toMatchObject({ name: 'channel', type: 'discord', state: 'ok', pending: 0 });
    // The webhook URL's path is its token: the status shows the host only.
    expect(JSON.stringify(status)).not.toContain(discord.token);
    expect(server.logs.join('\n')).not.toContain(discord.token);
  });

  it('When Discord is behind (rate limited) while three tracks arrive, then only the newest is posted', async () => {
    discord.rateLimit(1, 2);
    const limitedAt = clock.at;
    await postJson(`${server.url}/v1/remoteinput`, { artist: 'A', title: 'First' });
    await until(() => discord.requests.length === 1);
    await postJson(`${server.url}/v1/remoteinput`, { artist: 'A', title: 'Second' });
    await postJson(`${server.url}/v1/remoteinput`, { artist: 'A', title: 'Third' });
    // The 429 is recorded (the queue looked again), then its 2 s pass on the queues' clock.
    await clock.readsAfter(2);
    clock.set(limitedAt + 2000);
    await until(() => discord.posted.length === 1);
    // Nothing else follows: the older two were superseded. The marker comes next, not them.
    await postJson(`${server.url}/v1/remoteinput`, { artist: 'A', title: 'Marker' });
    await until(() => discord.posted.length === 2);
    expect(discord.posted.map((message) => message.embeds[0]?.title)).toEqual(['Third', 'Marker']);
    expect(discord.requests.map((one) => one.status)).toEqual([429, 200, 200]);
  });

  it('When a title is made of emoji and whitespace, then it is cut on a character boundary and Discord accepts it', async () => {
    await postJson(`${server.url}/v1/remoteinput`, { artist: 'A', title: '🎵'.repeat(300) });
    await until(() => discord.posted.length === 1);
    const title = discord.posted[0].embeds[0].title ?? '';
    expect(title.endsWith('…')).toBe(true);
    expect(title.length).toBeLessThanOrEqual(256);
    expect(title).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});
