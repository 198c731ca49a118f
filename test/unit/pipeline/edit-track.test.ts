import { changeOf } from '../../../src/pipeline/edit-track';
import { changesOf } from '../../../src/cli/commands/edit';

// A correction's body as a change (src/pipeline/edit-track.ts) and `svc edit`'s arguments as that
// body (src/cli/commands/edit.ts): pure.

const LIMITS = { maxFieldLength: 10, maxListItems: 2, maxRecordBytes: 65536 };

describe('changeOf', () => {
  it('When fields are given, then they are sanitized as a submission is; null and blank ones are removals', () => {
    const change = changeOf({ artist: ' Daft\u0007 Punk ', album: null, label: '  ', writers: ['a', 'b', 'c'], title: 'x'.repeat(12), bpm: '128' }, LIMITS);
    expect(change.set).toEqual({ artist: 'Daft Punk', writers: ['a', 'b'], title: 'x'.repeat(10), bpm: 128 });
    expect(change.remove.sort()).toEqual(['album', 'label']);
    expect(change.warnings).toHaveLength(2);
    expect(change.warnings).toEqual(expect.arrayContaining([expect.stringContaining("Field 'writers' truncated"), expect.stringContaining("Field 'title'")]));
  });

  it("When a field is the play log's own, then the change is refused naming it", () => {
    for (const field of ['channel', 'dj', 'show', 'end_reason', 'listeners', 'trimmed_seconds'])
      expect(() => changeOf({ title: 'x', [field]: 'y' }, LIMITS)).toThrow(`Field '${field}' belongs to the play log`);
  });

  it("When the play's air times, kind or usage are given, then they are the play's correction, times in UTC", () => {
    const change = changeOf({ started_at: '2026-10-05T22:00:00+02:00', ended_at: ' 2026-10-05T20:05:20.5Z ', kind: 'jingle', usage: 'background' }, LIMITS);
    expect(change).toEqual({
      set: {},
      remove: [],
      play: { startedAt: '2026-10-05T20:00:00.000Z', endedAt: '2026-10-05T20:05:20.500Z', kind: 'jingle', usage: 'background' },
      warnings: [],
    });
  });

  it('When a play field is malformed or removed, then the change is refused naming it and what it takes', () => {
    const refused: Array<[Record<string, unknown>, string]> = [
      [{ started_at: '2026-10-05T20:00:00' }, "Invalid 'started_at': expected an ISO 8601 date-time with an offset"],
      [{ ended_at: '2026-10-05Z' }, "Invalid 'ended_at'"],
      [{ ended_at: '2026-02-30T20:00:00Z' }, "Invalid 'ended_at'"],
      [{ ended_at: null }, "Invalid 'ended_at'"],
      [{ started_at: 1700000000 }, "Invalid 'started_at'"],
      [{ kind: 'Music' }, "Invalid 'kind': expected one of music, jingle, id, ad, talk, bed, unknown"],
      [{ usage: '' }, "Invalid 'usage': expected one of feature, theme, background"],
    ];
    for (const [body, message] of refused) expect(() => changeOf(body, LIMITS)).toThrow(message);
  });

  it('When system fields or the secret are given, then they are neither set nor removed', () => {
    const change = changeOf({ secret: 's', dbid: 3, hostname: null, coverimageraw: 'x', title: 'T' }, LIMITS);
    expect(change).toEqual({ set: { title: 'T' }, remove: [], play: {}, warnings: [] });
  });

  it('When a coverurl is given, then it is not stored and a warning says so', () => {
    expect(changeOf({ coverurl: 'https://example.invalid/c.png' }, LIMITS)).toEqual({
      set: {},
      remove: [],
      play: {},
      warnings: ["Field 'coverurl' ignored: images are not changed here"],
    });
  });
});

describe('changesOf (svc edit FIELD=VALUE ...)', () => {
  it('When arguments are given, then FIELD= removes, a repeated field is a list, and = in a value stays', () => {
    expect(changesOf(['isrc=GBDUW0000053', 'album=', 'writers=A', 'writers=B', 'writers=C', 'title=a=b'])).toEqual({
      isrc: 'GBDUW0000053',
      album: null,
      writers: ['A', 'B', 'C'],
      title: 'a=b',
    });
  });

  it('When an argument has no field name or no =, then it is a usage error', () => {
    for (const arg of ['title', '=x', ' =x']) expect(() => changesOf([arg])).toThrow('expected FIELD=VALUE');
  });
});
