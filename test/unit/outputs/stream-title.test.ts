import { streamTitleTemplate } from '../../../src/outputs/stream-title';

describe('stream titles', () => {
  it('When a field is missing, then no separator dangles; a format names any field', () => {
    const title = streamTitleTemplate();
    expect(title({ dbid: 1, artist: 'A', title: 'T' })).toBe('A - T');
    expect(title({ dbid: 1, title: 'T' })).toBe('T');
    expect(title({ dbid: 1, artist: 'A' })).toBe('A');
    expect(streamTitleTemplate('{{title}} ({{year}})')({ dbid: 1, title: 'T', date: '1999-01-01' })).toBe('T (1999)');
  });
});
