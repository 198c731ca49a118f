import { takePlay } from '../../../src/pipeline/play-fields';
import { DEFAULT_PLAY_POLICY, type PlayPolicy } from '../../../src/playlog/play-policy';

// The play a submission asks for (docs/play-log.md): the start window, kinds from the
// submission, from config rules and from the short-item rule, channels and people.

const ARRIVAL = '2026-11-27T12:00:00.000Z';
const policy = (overrides: Partial<PlayPolicy> = {}): PlayPolicy => ({ ...DEFAULT_PLAY_POLICY, ...overrides });

describe('takePlay', () => {
  it('When nothing about the play is sent, then it starts at its arrival on the main channel as featured music, and the metadata is untouched', () => {
    const taken = takePlay({ artist: 'A', title: 'T' }, ARRIVAL);
    expect(taken).toEqual({
      metadata: { artist: 'A', title: 'T' },
      play: { startedAt: ARRIVAL, channel: 'main', kind: 'music', usage: 'feature' },
      warnings: [],
    });
  });

  it('When started_at is within the window, then it is believed; the play fields leave the metadata', () => {
    const taken = takePlay(
      { artist: 'A', started_at: '2026-11-27T11:55:00+00:00', channel: '/live.ogg', dj: 'Ana', show: 'Late', usage: 'theme', kind: 'Jingle' },
      ARRIVAL,
    );
    expect(taken.play).toEqual({ startedAt: '2026-11-27T11:55:00.000Z', channel: '/live.ogg', kind: 'jingle', usage: 'theme', dj: 'Ana', show: 'Late' });
    expect(taken.metadata).toEqual({ artist: 'A' });
    expect(taken.warnings).toEqual([]);
  });

  it.each([
    ['2026-11-27T11:49:59.000Z', 'more than 600 s before'],
    ['2026-11-27T12:00:05.001Z', 'more than 600 s before or 5 s after'],
    ['yesterday', 'not an ISO 8601 date-time'],
    ['2026-11-27', 'not an ISO 8601 date-time'],
  ])('When started_at is %s, then the arrival is used and the answer warns', (startedAt, warning) => {
    const taken = takePlay({ artist: 'A', started_at: startedAt }, ARRIVAL);
    expect(taken.play.startedAt).toBe(ARRIVAL);
    expect(taken.warnings).toEqual([expect.stringContaining(warning)]);
  });

  it('When a duration is sent, then the play is planned to end when it runs out', () => {
    expect(takePlay({ artist: 'A', duration: 90 }, ARRIVAL).play.plannedEndAt).toBe('2026-11-27T12:01:30.000Z');
  });

  it('When a submission sets the log fields (ended_at, listeners), then they are dropped', () => {
    expect(takePlay({ artist: 'A', ended_at: 'x', end_reason: 'next', listeners: '5', trimmed_seconds: 3 }, ARRIVAL).metadata).toEqual({ artist: 'A' });
  });

  it('When kind or usage is not one of the names, then the default stands with a warning', () => {
    const taken = takePlay({ artist: 'A', kind: 'song', usage: 'loud' }, ARRIVAL);
    expect([taken.play.kind, taken.play.usage]).toEqual(['music', 'feature']);
    expect(taken.warnings).toHaveLength(2);
  });

  describe('kind rules', () => {
    const rules = policy({
      kindRules: [
        { match: { artist: '^station id$' }, kind: 'id' },
        { match: { title: 'jingle', album: '^imaging' }, kind: 'jingle' },
      ],
      shortItemSeconds: 30,
      shortItemKind: 'jingle',
    });

    it('When every pattern of a rule matches (case-insensitively), then the rule sets the kind; the first match wins', () => {
      expect(takePlay({ artist: 'Station ID', title: 'x' }, ARRIVAL, rules).play.kind).toBe('id');
      expect(takePlay({ artist: 'X', title: 'Morning JINGLE', album: 'Imaging 2026' }, ARRIVAL, rules).play.kind).toBe('jingle');
    });

    it('When only some patterns of a rule match, then it does not apply', () => {
      expect(takePlay({ artist: 'X', title: 'Morning jingle', album: 'Hits' }, ARRIVAL, rules).play.kind).toBe('music');
    });

    it('When an item is shorter than shortItemSeconds, then it is not music; at or above it, it is', () => {
      expect(takePlay({ artist: 'X', title: 'Sweeper', duration: 8 }, ARRIVAL, rules).play.kind).toBe('jingle');
      expect(takePlay({ artist: 'X', title: 'Song', duration: 30 }, ARRIVAL, rules).play.kind).toBe('music');
      expect(takePlay({ artist: 'X', title: 'No length' }, ARRIVAL, rules).play.kind).toBe('music');
    });

    it('When the submission names its kind, then it wins over the rules', () => {
      expect(takePlay({ artist: 'Station ID', kind: 'music', duration: 5 }, ARRIVAL, rules).play.kind).toBe('music');
    });
  });
});

describe('takePlay with hostile durations', () => {
  it.each([1e300, 86_401, -5, Number.MAX_VALUE])('When duration is %s, then no end is planned (and nothing throws)', (duration) => {
    expect(takePlay({ artist: 'A', duration }, ARRIVAL).play.plannedEndAt).toBeUndefined();
  });
});
