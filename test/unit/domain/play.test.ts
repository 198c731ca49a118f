import { countListeners, recordJson } from '../../../src/domain/play';
import { NowPlaying } from '../../../src/domain/current-track';

// Listeners per play (docs/play-log.md): atp = distinct sessions overlapping the play,
// listener seconds within it, and the peak at one moment.

const at = (second: number) => new Date(Date.UTC(2026, 0, 1) + second * 1000).toISOString();
const session = (from: number, to: number | null) => ({ connectedAt: at(from), disconnectedAt: to === null ? null : at(to) });
const play = { startedAt: at(100), endedAt: at(200) };

describe('countListeners', () => {
  it('When sessions overlap the play in every way, then the count follows the overlap rule, open sessions included', () => {
    const sessions = [
      session(0, 50), // left before: no
      session(0, 100), // left at the start: no (disconnected_at must be after started_at)
      session(50, 150), // 50 s
      session(120, 130), // 10 s
      session(150, null), // still connected: 50 s
      session(200, 300), // joined at the end: no
    ];
    expect(countListeners(play, sessions, 0, Date.parse(at(400)))).toEqual({ atp: 3, listener_seconds: 110, peak: 2 });
  });

  it('When minSessionSeconds is set, then shorter sessions are left out (an open one measured until now)', () => {
    const sessions = [session(120, 125), session(150, null)];
    expect(countListeners(play, sessions, 10, Date.parse(at(155)))).toEqual({ atp: 0, listener_seconds: 0, peak: 0 });
    expect(countListeners(play, sessions, 10, Date.parse(at(400)))).toEqual({ atp: 1, listener_seconds: 50, peak: 1 });
  });

  it('When one listener leaves as another joins, then the peak is one', () => {
    expect(countListeners(play, [session(90, 150), session(150, 210)], 0, 0).peak).toBe(1);
  });
});

describe('recordJson', () => {
  it('When a submitted field has the name of a play field, then the play log wins', () => {
    const json = recordJson({
      dbid: 1,
      metadata: { artist: 'A', kind: 'forged' },
      play: { startedAt: at(0), endedAt: null, endReason: null, channel: 'main', kind: 'jingle', usage: 'feature', listeners: null },
    });
    expect(json).toEqual({
      dbid: 1,
      artist: 'A',
      kind: 'jingle',
      started_at: at(0),
      ended_at: null,
      end_reason: null,
      usage: 'feature',
      channel: 'main',
      listeners: null,
    });
  });
});

describe('NowPlaying and a play that ended', () => {
  it('When an update from an older copy (enrichment) comes after the end, then the end shown stays', () => {
    const onAir = { startedAt: at(0), endedAt: null, endReason: null, channel: 'main', kind: 'music' as const, usage: 'feature' as const, listeners: null };
    const record = { dbid: 1, receivedSeq: 1, receivedAt: at(0), metadata: { artist: 'A' }, play: onAir };
    const nowPlaying = new NowPlaying(record);
    nowPlaying.update({ ...record, play: { ...onAir, endedAt: at(60), endReason: 'explicit' } });
    nowPlaying.update({ ...record, metadata: { artist: 'A', album: 'found later' } });
    expect(nowPlaying.current()?.play?.endedAt).toBe(at(60));
    expect(nowPlaying.current()?.metadata.album).toBe('found later');
  });
});
