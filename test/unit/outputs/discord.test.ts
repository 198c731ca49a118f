import { createDiscordOutput } from '../../../src/outputs/discord';
import { startDiscordFake } from '../../fakes/discord';
import { messageOf } from '../../helpers/output-message';

// What one send() puts on the wire to a local Discord stand-in: the embed within Discord's limits (docs/outputs.md "discord").

describe('discord embed', () => {
  it('When fields are long, then each is cut to its limit (on a character boundary) and the whole stays within 6000', async () => {
    const discord = await startDiscordFake();
    try {
      // No image store: the message names no cover.
      const output = createDiscordOutput({ name: 'channel', url: discord.webhookUrl }, { get: () => Promise.resolve(null) });
      const send = (payload: object) => output.send(messageOf(payload), AbortSignal.timeout(5000));
      expect((await send({ dbid: 1, title: 'x'.repeat(300), artist: 'y'.repeat(300), album: 'z'.repeat(9000), date: '2001-02-03' })).outcome).toBe('delivered');
      expect((await send({ dbid: 2, title: '🎵'.repeat(300) })).outcome).toBe('delivered');
      const [long, emoji] = discord.posted.map((message) => message.embeds[0]);
      expect(long.title).toHaveLength(256);
      expect(long.author?.name).toHaveLength(256);
      expect(long.description?.length).toBeLessThanOrEqual(4096);
      expect((long.title?.length ?? 0) + (long.author?.name?.length ?? 0) + (long.description?.length ?? 0)).toBeLessThanOrEqual(6000);
      expect(emoji.title).toBe(`${'🎵'.repeat(127)}…`);
    } finally {
      await discord.close();
    }
  });
});
