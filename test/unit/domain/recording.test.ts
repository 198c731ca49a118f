import { MARKS, NAME_MARKS, recordingColumnsOf, recordingKey, recordingMarks, spellingKey } from '../../../src/domain/recording';

// What the store keeps of each play for reports (src/domain/recording.ts): the keys that group
// its plays and the marks that let the checks skip the plays that cannot have a problem.

describe('recording keys and marks', () => {
  it('When an ISRC has the right shape once normalized, then it is the key; otherwise the names are', () => {
    expect(recordingKey({ isrc: 'gb-duw-00-00053', artist: 'Daft Punk' })).toBe('isrc:GBDUW0000053');
    expect(recordingKey({ isrc: 'GB123', artist: 'Daft Punk', title: 'One More Time' })).toBe('names:["Daft Punk","One More Time",""]');
    expect(spellingKey({ isrc: 'GB123', artist: 'DAFT Punk', title: 'One More TIME' })).toBe('["daft punk","one more time"]');
  });

  it('When a key is made of names with control characters, then it holds none (PostgreSQL text holds no NUL)', () => {
    const names = { artist: 'A\u0000B', title: 'T' };
    expect(recordingKey(names)).not.toContain('\u0000');
    expect(spellingKey(names)).not.toContain('\u0000');
  });

  it('When names are missing, unidentified or in capitals, then the marks say so, and say which names a census line can take', () => {
    const complete = { artist: 'Daft Punk', title: 'One More Time', album: 'Discovery', label: 'Virgin', isrc: 'GBDUW0000053' };
    expect(recordingMarks(complete)).toBe(NAME_MARKS.artist | NAME_MARKS.title | NAME_MARKS.isrc | NAME_MARKS.album | NAME_MARKS.label);
    expect(recordingMarks({ ...complete, title: ' ' }) & MARKS.noName).toBe(MARKS.noName);
    expect(recordingMarks({ ...complete, isrc: 'GB123', label: undefined }) & MARKS.unidentified).toBe(MARKS.unidentified);
    expect(recordingMarks({ ...complete, isrc: 'GB123' }) & MARKS.unidentified).toBe(0);
    expect(recordingMarks({ ...complete, album: 'ДИСКАВЕРИ' }) & MARKS.capitals).toBe(MARKS.capitals);
    expect(recordingMarks({ ...complete, artist: 'ABBA 日本' }) & MARKS.capitals).toBe(MARKS.capitals);
    expect(recordingMarks({ ...complete, artist: '坂本龍一' }) & MARKS.capitals).toBe(0);
  });

  it('When the columns are made from stored metadata, then names are read as a report reads them (trimmed, an ISRC list gives its first)', () => {
    const columns = recordingColumnsOf({ artist: '  Daft Punk ', title: 'One More Time', isrc: ['GBDUW0000053', 'GBDUW0000054'] });
    expect(columns.recordingKey).toBe('isrc:GBDUW0000053');
    expect(columns.marks & NAME_MARKS.artist).toBe(NAME_MARKS.artist);
    expect(columns.marks & NAME_MARKS.album).toBe(0);
    const odd = { artist: 'A', isrc: [42, 'GBDUW0000053'] } as unknown as Parameters<typeof recordingColumnsOf>[0];
    expect(recordingColumnsOf(odd).recordingKey).toBe('names:["A","",""]');
  });

  it('When recognition made a record, then its marks say so (the check reads only those plays for its notes)', () => {
    expect(recordingColumnsOf({ artist: 'Moderat', title: 'A New Error', recognition: 'fingerprint' }).marks & MARKS.recognised).toBe(MARKS.recognised);
    expect(recordingColumnsOf({ artist: 'Moderat', title: 'A New Error' }).marks & MARKS.recognised).toBe(0);
  });
});
