import type { TrackRecord } from '../../../src/domain/track';
import { ChannelNowPlaying } from '../../../src/domain/channel-now-playing';
import { until } from '../../helpers/eventually';

// One current play per channel (docs/channels.md "Now playing per channel"), fed from the global sequence.

const record = (dbid: number, channel: string, title = `t${dbid}`): TrackRecord => ({
  dbid,
  receivedSeq: dbid,
  receivedAt: new Date(dbid * 1000).toISOString(),
  metadata: { title },
  play: { startedAt: new Date(dbid * 1000).toISOString(), endedAt: null, endReason: null, channel, kind: 'music', usage: 'feature', listeners: null },
});

describe('ChannelNowPlaying', () => {
  it('When two channels get records, then each view shows its own and the global one the newest', () => {
    const now = new ChannelNowPlaying(null, []);
    now.offer(record(1, 'fm'));
    now.offer(record(2, 'web'));
    now.offer(record(3, 'fm'));
    expect(now.current()?.dbid).toBe(3);
    expect(now.currentOn('fm')?.dbid).toBe(3);
    expect(now.currentOn('web')?.dbid).toBe(2);
    expect(JSON.parse(now.channel('web')?.snapshot().body ?? '{}')).toMatchObject({ dbid: 2, channel: 'web' });
    expect(now.channelNames()).toEqual(['fm', 'web']);
  });

  it('When records arrive out of order with a gap, then each channel still gets its records once, in order', async () => {
    const stored = [record(1, 'fm'), record(2, 'web'), record(3, 'fm'), record(4, 'web')];
    const now = new ChannelNowPlaying(null, [], { between: async (after, before) => stored.filter((r) => r.dbid > after && r.dbid < before) });
    const seen: Record<string, number[]> = { fm: [], web: [] };
    for (const name of ['fm', 'web']) now.channel(name, true)?.on('track-changed', (r) => seen[name]?.push(r.dbid));
    now.offer(record(4, 'web'));
    await until(() => now.current()?.dbid === 4);
    expect(seen).toEqual({ fm: [1, 3], web: [2, 4] });
  });

  it("When a channel's record commits after a newer dbid of another channel was shown, then its view still shows it, and each view gets its own records once, in order", async () => {
    // Dbids of one channel commit in order, two channels' do not (docs/channels.md "Order across channels").
    const stored = [record(1, 'fm'), record(2, 'web'), record(4, 'web')];
    const betweenOn = async (channel: string, after: number, before: number) =>
      stored.filter((r) => r.play?.channel === channel && r.dbid > after && r.dbid < before);
    const now = new ChannelNowPlaying(null, [], { between: async (after, before) => stored.filter((r) => r.dbid > after && r.dbid < before), betweenOn });
    const seen: Record<string, number[]> = { fm: [], web: [] };
    for (const name of ['fm', 'web']) now.channel(name, true)?.on('track-changed', (r) => seen[name]?.push(r.dbid));
    now.offer(record(4, 'web'));
    await until(() => now.currentOn('web')?.dbid === 4 && now.current()?.dbid === 4);
    // dbid 3 (fm) was not committed when the gaps below 4 were read: it arrives now.
    stored.push(record(3, 'fm'));
    now.offer(record(3, 'fm'));
    await now.channel('fm')?.shown();
    expect(now.currentOn('fm')?.dbid).toBe(3);
    expect(now.current()?.dbid).toBe(4);
    expect(seen).toEqual({ fm: [1, 3], web: [2, 4] });
  });

  it('When a channel starts with stored current records, then its view shows them before any change', () => {
    const now = new ChannelNowPlaying(record(5, 'web'), [record(4, 'fm'), record(5, 'web')]);
    expect(now.currentOn('fm')?.dbid).toBe(4);
    expect(now.currentOn('web')?.dbid).toBe(5);
  });

  it("When a channel's current record is deleted while another channel is current, then that channel falls back to its newest left", async () => {
    const now = new ChannelNowPlaying(null, [], { currentOn: async (channel) => (channel === 'fm' ? record(1, 'fm') : null) });
    now.offer(record(1, 'fm'));
    now.offer(record(2, 'fm'));
    now.offer(record(3, 'web'));
    now.deleted(2);
    await until(() => now.currentOn('fm')?.dbid === 1);
    expect(now.current()?.dbid).toBe(3);
  });

  it("When an update of a channel's current record comes while another channel is current, then the channel's view shows it", () => {
    const now = new ChannelNowPlaying(null, []);
    now.offer(record(1, 'fm'));
    now.offer(record(2, 'web'));
    now.update(record(1, 'fm', 'enriched'));
    expect(JSON.parse(now.channel('fm')?.snapshot().body ?? '{}')).toMatchObject({ title: 'enriched' });
    expect(now.current()?.dbid).toBe(2);
  });

  it('When a record settles, then work registered on its channel is awaited with the global work', async () => {
    const now = new ChannelNowPlaying(null, []);
    now.offer(record(1, 'fm'));
    const done: string[] = [];
    now.onSettled(async () => void done.push('global'));
    now.channel('fm')?.onSettled(async () => void done.push('fm'));
    now.channel('web', true)?.onSettled(async () => void done.push('web'));
    await now.settle(record(1, 'fm'));
    expect(done.sort()).toEqual(['fm', 'global']);
  });

  it('When a retracted record hands back to one on the same channel, then the view shows that one without a second change', () => {
    const now = new ChannelNowPlaying(null, []);
    now.offer(record(1, 'fm'));
    now.offer(record(2, 'fm'));
    const changes: number[] = [];
    now.channel('fm')?.on('track-changed', (r) => changes.push(r.dbid));
    now.retract(2, record(1, 'fm'));
    expect(now.currentOn('fm')?.dbid).toBe(1);
    expect(changes).toEqual([1]);
  });
});
