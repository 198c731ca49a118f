import { changesLine, correctedPlay, metadataChanges } from '../../../src/domain/correction';
import { correctorOf } from '../../../src/server/routes/history';

// A correction's audit entry and the play it makes (src/domain/correction.ts), and who the entry
// names (src/server/routes/history.ts): pure.

const PLAY = { startedAt: '2026-10-05T20:00:00.000Z', endedAt: '2026-10-05T20:05:00.000Z', kind: 'music', usage: 'feature' } as const;

describe('correctedPlay', () => {
  it('When fields change, then the changes name each with its value before and after; unchanged ones are left out', () => {
    expect(correctedPlay(PLAY, { endedAt: '2026-10-05T20:04:00.000Z', kind: 'jingle', usage: 'feature' })).toEqual({
      play: { ...PLAY, endedAt: '2026-10-05T20:04:00.000Z', kind: 'jingle' },
      changes: { ended_at: { before: PLAY.endedAt, after: '2026-10-05T20:04:00.000Z' }, kind: { before: 'music', after: 'jingle' } },
    });
  });

  it('When the end would not be after the start, then it is refused naming both', () => {
    expect(correctedPlay(PLAY, { startedAt: PLAY.endedAt })).toEqual({ refused: `ended_at ${PLAY.endedAt} must be after started_at ${PLAY.endedAt}` });
    expect(correctedPlay({ ...PLAY, endedAt: null }, { startedAt: '2026-10-06T00:00:00.000Z' })).toMatchObject({ changes: { started_at: expect.any(Object) } });
  });
});

describe('metadataChanges and changesLine', () => {
  it('When fields are set, changed and removed, then each is a change and the line says it in order', () => {
    const changes = metadataChanges({ artist: 'DAFT PUNK', album: 'Discovery', writers: ['a'] }, { artist: 'Daft Punk', writers: ['a'], isrc: 'GBDUW0000053' });
    expect(changes).toEqual({
      artist: { before: 'DAFT PUNK', after: 'Daft Punk' },
      album: { before: 'Discovery', after: null },
      isrc: { before: null, after: 'GBDUW0000053' },
    });
    expect(changesLine(changes)).toBe('artist DAFT PUNK -> Daft Punk; album Discovery -> none; isrc none -> GBDUW0000053');
    expect(changesLine({ writers: { before: ['a'], after: ['a', 'b'] } })).toBe('writers ["a"] -> ["a","b"]');
  });
});

describe('correctorOf', () => {
  it("When svc's own client asks, then the entry says cli before the address; any other client is its address", () => {
    expect(correctorOf('127.0.0.1', 'svc/0.1.0')).toBe('cli 127.0.0.1');
    expect(correctorOf('192.0.2.7', 'curl/8.5.0')).toBe('192.0.2.7');
    expect(correctorOf('192.0.2.7', 'svc/0.1.0 evil')).toBe('192.0.2.7');
    expect(correctorOf('::1', '')).toBe('::1');
  });
});
