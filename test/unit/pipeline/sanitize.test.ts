import { fitRecord } from '../../../src/pipeline/fit-record';
import { sanitize } from '../../../src/pipeline/sanitize';

/** UTF-8 bytes of a value's JSON: what the record bound counts. */
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

const limits = { maxFieldLength: 1000, maxListItems: 100, maxRecordBytes: 65536 };

describe('sanitize', () => {
  it('When a string holds null bytes anywhere, then every one is removed', () => {
    const { fields } = sanitize({ artist: '\0Daft\0 Punk\0', title: 'One\0\0More' }, limits);
    expect(fields).toEqual({ artist: 'Daft Punk', title: 'OneMore' });
  });

  it('When a field is longer than the limit, then it is cut to the limit with the exact warning of docs/limits-and-load.md', () => {
    const { fields, warnings } = sanitize({ title: 'x'.repeat(100_000) }, limits);
    expect(fields.title).toBe('x'.repeat(1000));
    expect(warnings).toEqual(["Field 'title' truncated from 100000 to 1000 characters"]);
  });

  it('When 1,500 emoji are sent, then 1,000 code points are kept and no surrogate pair is split', () => {
    const emoji = '\u{1F3B5}'.repeat(1500);
    const { fields, warnings } = sanitize({ title: emoji }, limits);
    const kept = fields.title as string;
    expect(Array.from(kept)).toHaveLength(1000);
    expect(kept.isWellFormed()).toBe(true);
    expect(warnings).toEqual(["Field 'title' truncated from 1500 to 1000 characters"]);
  });

  it('When a field is exactly at the limit, then it is kept whole without a warning', () => {
    const { fields, warnings } = sanitize({ title: '\u{1F3B5}'.repeat(1000) }, limits);
    expect(Array.from(fields.title as string)).toHaveLength(1000);
    expect(warnings).toEqual([]);
  });

  it.each([
    'hostname',
    'hostfqdn',
    'hostip',
    'ipaddress',
    'httpport',
    'dbid',
    'filename',
    'previoustrack',
    'cache_warmed',
    'track_received',
    'version',
    'coverimagetype',
    'secret',
    'coverimageraw',
    'artistthumbnailbase64',
    'HostName',
    'constructor',
    'prototype',
  ])('When the system or binary field %s is sent, then it is removed without a warning', (key) => {
    const { fields, warnings } = sanitize({ artist: 'A', [key]: 'value' }, limits);
    expect(fields).toEqual({ artist: 'A' });
    expect(warnings).toEqual([]);
  });

  it('When __proto__ is an own key (as JSON.parse makes it), then it is removed and nothing is polluted', () => {
    const input = JSON.parse('{"artist":"A","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const { fields } = sanitize(input, limits);
    expect(Object.keys(fields)).toEqual(['artist']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
  });

  it('When a value is a data: URI, then the field is removed', () => {
    const { fields } = sanitize({ artist: 'A', comments: ' DATA:image/png;base64,AAAA' }, limits);
    expect(fields).toEqual({ artist: 'A' });
  });

  it('When a coverurl is sent, then it is taken out of the fields and handed over, never echoed', () => {
    const result = sanitize({ artist: 'A', coverurl: 'https://example.invalid/c.jpg' }, limits);
    expect(result.fields).toEqual({ artist: 'A' });
    expect(result.submittedCoverUrl).toBe('https://example.invalid/c.jpg');
  });

  it('When numeric fields arrive as strings, then they come back as numbers', () => {
    const { fields, warnings } = sanitize({ bpm: '128.5', duration: ' 240 ', bitrate: 320, samplerate: '4.41e4', track: '7' }, limits);
    expect(fields).toEqual({ bpm: 128.5, duration: 240, bitrate: 320, samplerate: 44100, track: 7 });
    expect(warnings).toEqual([]);
  });

  it.each(['NaN', 'Infinity', '-Infinity', '1e400', 'abc', '0x10', true])('When a numeric field is %p, then it is dropped with a warning', (value) => {
    const { fields, warnings } = sanitize({ artist: 'A', bpm: value }, limits);
    expect(fields).toEqual({ artist: 'A' });
    expect(warnings).toEqual(["Field 'bpm' dropped: not a finite number"]);
  });

  it('When an unknown field holds a non-finite number (JSON 1e400), then it is dropped with a warning', () => {
    const input = JSON.parse('{"artist":"A","loudness":1e400}') as Record<string, unknown>;
    const { fields, warnings } = sanitize(input, limits);
    expect(fields).toEqual({ artist: 'A' });
    expect(warnings).toEqual(["Field 'loudness' dropped: not a finite number"]);
  });

  it('When objects or lists holding anything but text are sent, then they are dropped with a warning', () => {
    const { fields, warnings } = sanitize({ artist: 'A', extra: { a: 1 }, tags: ['x', 2], nested: [['x']] }, limits);
    expect(fields).toEqual({ artist: 'A' });
    expect(warnings).toEqual([
      "Field 'extra' dropped: objects are not accepted",
      "Field 'tags' dropped: a list may hold only text",
      "Field 'nested' dropped: a list may hold only text",
    ]);
  });

  // What's Now Playing sends these four as lists of strings (nowplaying/db.py LISTFIELDS,
  // nowplaying/types.py TrackMetadata: `isrc: list[str]`, ...).
  it("When What's Now Playing sends its list fields, then each stays a list, element by element under the string rules", () => {
    const { fields, warnings } = sanitize(
      {
        isrc: ['USRC17607839', ' GBAYE0601498\0 '],
        musicbrainzartistid: ['056e4f3e-d505-4dad-8ec1-d04f521cbb56'],
        genres: ['house', '', '  ', 'data:text/plain,x', 'techno'],
        artistwebsites: [],
        tags: ['x'.repeat(1200)],
      },
      limits,
    );
    expect(fields).toEqual({
      isrc: ['USRC17607839', 'GBAYE0601498'],
      musicbrainzartistid: ['056e4f3e-d505-4dad-8ec1-d04f521cbb56'],
      genres: ['house', 'techno'],
      tags: ['x'.repeat(1000)],
    });
    expect(warnings).toEqual(["Field 'tags' truncated from 1200 to 1000 characters"]);
  });

  it('When a list is sent for a numeric field or for coverurl, then it is dropped with a warning', () => {
    const { fields, warnings } = sanitize({ artist: 'A', bpm: ['120'], coverurl: ['http://x/y.jpg'] }, limits);
    expect(fields).toEqual({ artist: 'A' });
    expect(warnings).toEqual(["Field 'bpm' dropped: expected a single value", "Field 'coverurl' dropped: expected a single value"]);
  });

  it('When deck is a label and the totals are numeric strings, then deck stays text and the totals become numbers', () => {
    const { fields, warnings } = sanitize({ deck: '2B', track_total: '12', disc_total: '2', tracktotal: '9' }, limits);
    expect(fields).toEqual({ deck: '2B', track_total: 12, disc_total: 2, tracktotal: '9' });
    expect(warnings).toEqual([]);
  });

  it('When a numeric field is blank (bpm= from a URL template), then it is left out silently', () => {
    const { fields, warnings } = sanitize({ artist: 'A', bpm: '', duration: '  ', track: '\0' }, limits);
    expect(fields).toEqual({ artist: 'A' });
    expect(warnings).toEqual([]);
  });

  it('When a text field holds a number or boolean, then it is dropped with a warning', () => {
    const { fields, warnings } = sanitize({ artist: 42, title: true, album: 'B' }, limits);
    expect(fields).toEqual({ album: 'B' });
    expect(warnings).toEqual(["Field 'artist' dropped: expected text", "Field 'title' dropped: expected text"]);
  });

  it('When unknown scalar fields are sent, then they are kept as they are', () => {
    const { fields } = sanitize({ artist: 'A', deckname: 'Deck 1', loudness: -7.5, explicit: false }, limits);
    expect(fields).toEqual({ artist: 'A', deckname: 'Deck 1', loudness: -7.5, explicit: false });
  });

  it('When values are null or empty, then they are left out silently', () => {
    const { fields, warnings } = sanitize({ artist: 'A', album: null, genre: '   ', title: '\0' }, limits);
    expect(fields).toEqual({ artist: 'A' });
    expect(warnings).toEqual([]);
  });

  it('When a field name is empty or holds control characters, then it is dropped with a warning', () => {
    const { fields, warnings } = sanitize({ artist: 'A', '': 'x', 'a\u0001b': 'y', ['k'.repeat(200)]: 'z' }, limits);
    expect(fields).toEqual({ artist: 'A' });
    expect(warnings).toHaveLength(3);
    for (const warning of warnings) expect(warning).toMatch(/dropped: invalid field name$/);
  });

  it('When a string holds a lone surrogate, then it is replaced so the stored text is valid UTF-8', () => {
    const { fields } = sanitize({ title: 'a\ud800b' }, limits);
    expect(fields.title).toBe('a\ufffdb');
  });

  it('When a fingerprint is longer than the limit, then the field is truncated but recognition gets it whole', () => {
    const fingerprint = 'AQAD'.repeat(1000);
    const result = sanitize({ fpcalcfingerprint: fingerprint, fpcalcduration: 200 }, limits);
    expect(result.fields.fpcalcfingerprint).toBe(fingerprint.slice(0, 1000));
    expect(result.warnings).toEqual(["Field 'fpcalcfingerprint' truncated from 4000 to 1000 characters"]);
    expect(result.recognitionInput).toEqual({ fpcalcfingerprint: fingerprint });
    expect(sanitize({ title: 'x'.repeat(2000) }, limits).recognitionInput).toBeUndefined();
  });

  it('When the limit is configured lower, then truncation follows it', () => {
    const { fields, warnings } = sanitize({ title: 'abcdef' }, { ...limits, maxFieldLength: 3 });
    expect(fields.title).toBe('abc');
    expect(warnings).toEqual(["Field 'title' truncated from 6 to 3 characters"]);
  });
});

describe('sanitize: bounded records (docs/limits-and-load.md "Records")', () => {
  it('When a text holds C0 control characters, then all but tab and newline are removed, like NUL', () => {
    const { fields } = sanitize({ title: 'a\u0001b\u001bc\rd\te\nf\u0008g', genres: ['x\u0007y'] }, limits);
    expect(fields).toEqual({ title: 'abcd\te\nfg', genres: ['xy'] });
  });

  it('When a list holds more elements than maxListItems, then the first ones are kept with a warning naming the field', () => {
    const genres = Array.from({ length: 1000 }, (_, index) => `g${index}`);
    const { fields, warnings } = sanitize({ title: 'T', genres }, limits);
    expect(fields.genres).toEqual(genres.slice(0, 100));
    expect(warnings).toEqual(["Field 'genres' truncated from 1000 to 100 items"]);
  });

  it('When a 1 MB list is sent, then the stored record fits maxRecordBytes and the cut is warned about', () => {
    const genres = Array.from({ length: 1000 }, () => 'x'.repeat(1000));
    const { fields, warnings } = sanitize({ artist: 'A', title: 'T', genres }, limits);
    expect(jsonBytes(fields)).toBeLessThanOrEqual(65536);
    expect(fields.artist).toBe('A');
    expect(fields.title).toBe('T');
    expect((fields.genres as string[]).length).toBeLessThan(100);
    expect(warnings).toEqual(["Field 'genres' truncated from 1000 to 100 items", expect.stringMatching(/^Field 'genres' truncated from 100 to \d+ items$/)]);
  });

  it('When many long fields are over the record limit, then the largest are cut to one common size and small ones stay whole', () => {
    const input: Record<string, unknown> = { artist: 'A', title: 'T', short: 'kept' };
    for (let index = 0; index < 10; index += 1) input[`long${index}`] = 'é'.repeat(1000);
    const { fields, warnings } = sanitize(input, { ...limits, maxRecordBytes: 4096 });
    expect(jsonBytes(fields)).toBeLessThanOrEqual(4096);
    expect(fields.short).toBe('kept');
    const sizes = new Set(Array.from({ length: 10 }, (_, index) => Array.from(fields[`long${index}`] as string).length));
    expect(sizes.size).toBe(1);
    expect(warnings).toHaveLength(10);
    expect(warnings[0]).toMatch(/^Field 'long0' truncated from 1000 to \d+ characters$/);
  });

  it('When a cut would fall inside an escape or a surrogate pair, then whole characters are kept and the JSON still fits', () => {
    const { fields } = sanitize({ title: 'T', a: '"\\\u{1F3B5}'.repeat(500), b: '\u{1F3B5}'.repeat(900) }, { ...limits, maxRecordBytes: 1024 });
    expect(jsonBytes(fields)).toBeLessThanOrEqual(1024);
    expect((fields.a as string).isWellFormed()).toBe(true);
    expect((fields.b as string).isWellFormed()).toBe(true);
  });

  it('When the field names and numbers alone are over the limit, then the submission is refused with 413', () => {
    const input: Record<string, unknown> = { title: 'T' };
    for (let index = 0; index < 60; index += 1) input[`${'n'.repeat(100)}${index}`] = index;
    let refusal: unknown;
    try {
      sanitize(input, { ...limits, maxRecordBytes: 2048 });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toMatchObject({ status: 413, code: 'RECORD_TOO_LARGE' });
    expect((refusal as Error).message).toMatch(/cannot fit in 2048 bytes/);
  });
});

describe('fitRecord', () => {
  it('never cuts a field it is told to keep whole', () => {
    const warnings: string[] = [];
    const fitted = fitRecord({ coverurl: 'cover/' + 'k'.repeat(600), bio: 'b'.repeat(5000) }, 1024, warnings, new Set(['coverurl']));
    expect(fitted.coverurl).toBe('cover/' + 'k'.repeat(600));
    expect(jsonBytes(fitted)).toBeLessThanOrEqual(1024);
    expect(warnings).toEqual([expect.stringMatching(/^Field 'bio' truncated from 5000 to \d+ characters$/)]);
  });

  it('When the record is over, then the largest values are cut to one common size that spends the budget; a small one stays whole', () => {
    const fields = { a: 'a'.repeat(10), b: 'b'.repeat(100), c: 'c'.repeat(150) };
    const maxBytes = jsonBytes(fields) - 150;
    const warnings: string[] = [];
    const fitted = fitRecord(fields, maxBytes, warnings);
    expect(fitted.a).toBe(fields.a);
    expect((fitted.b as string).length).toBe((fitted.c as string).length);
    // One common cap over two values wastes at most a byte to rounding.
    expect(jsonBytes(fitted)).toBeLessThanOrEqual(maxBytes);
    expect(jsonBytes(fitted)).toBeGreaterThanOrEqual(maxBytes - 1);
    expect(warnings).toHaveLength(2);
    expect(fitRecord(fields, jsonBytes(fields), [])).toEqual(fields);
  });
});

describe('sanitize: the length limit counts code points, not UTF-16 units', () => {
  it('When a value mixes emoji and letters, then it is cut after whole code points', () => {
    const short = { ...limits, maxFieldLength: 3 };
    expect(sanitize({ title: '\u{1F600}\u{1F600}ab' }, short)).toMatchObject({
      fields: { title: '\u{1F600}\u{1F600}a' },
      warnings: ["Field 'title' truncated from 4 to 3 characters"],
    });
    expect(sanitize({ title: '\u{1F600}'.repeat(3) }, short)).toMatchObject({ fields: { title: '\u{1F600}'.repeat(3) }, warnings: [] });
  });
});

describe('sanitize: numeric fields', () => {
  it.each([
    ['12', 12],
    ['-3.5', -3.5],
    ['.5', 0.5],
    ['1e3', 1000],
    [7, 7],
  ] as const)('reads %p as %p', (input, expected) => expect(sanitize({ bpm: input }, limits)).toEqual({ fields: { bpm: expected }, warnings: [] }));
  it.each(['1,5', '12abc', 'Infinity', NaN, Infinity])('drops %p with a warning', (input) =>
    expect(sanitize({ bpm: input }, limits)).toEqual({ fields: {}, warnings: ["Field 'bpm' dropped: not a finite number"] }),
  );
  it.each([' ', null])('takes %p as absent', (input) => expect(sanitize({ bpm: input }, limits)).toEqual({ fields: {}, warnings: [] }));
});
