import { createHash } from 'node:crypto';
import yaml from 'js-yaml';
import { OUTPUT_BLOCKS, outputBlock } from '../../../src/cli/commands/output-blocks';
import { OUTPUT_TYPES, outputKeysOf } from '../../../src/config/output-types';
import { configSchema } from '../../../src/config/schema';
import { dlsFile, dlsTemplate, itemToggleOf } from '../../../src/outputs/dls-file';
import { lastFmSignature } from '../../../src/outputs/lastfm';
import { listenOf } from '../../../src/outputs/listenbrainz';
import { obsAuthentication } from '../../../src/outputs/obs';
import { rdsLines, rdsLinesTemplate, rtPlusValue, toRdsAscii } from '../../../src/outputs/rds-text';
import { listenVerdict, neverScrobbled, playOf } from '../../../src/outputs/scrobble';

// The pure parts of the reach outputs (docs/outputs.md): RDS lines and their limits, the DLS
// file, what counts as a listen, the Last.fm signature, OBS's authentication string and the
// config blocks `svc outputs add` prints.

describe('rds text', () => {
  it('When a title is long or accented, then TEXT= holds at most 64 ASCII characters and RT+ tags point at the artist and title as sent', () => {
    const template = rdsLinesTemplate('{{artist}} - {{title}}', '{{artist}}', true);
    const [text, rtp, dps] = rdsLines(template, { dbid: 1, artist: 'Björk', title: 'Jóga' });
    expect(text).toBe('TEXT=Bjork - Joga');
    // ITEM.ARTIST at 0, 5 long (marker 4); ITEM.TITLE at 8, 4 long (marker 3).
    expect(rtp).toBe('RTP=04,00,04,01,08,03');
    expect(dps).toBe('DPS=Bjork');
    const [long] = rdsLines(template, { dbid: 2, artist: 'A'.repeat(50), title: 'Straße nach 東京 '.repeat(4) });
    expect(long?.length).toBeLessThanOrEqual('TEXT='.length + 64);
    expect(long).toMatch(/^TEXT=[\x20-\x7e]+$/);
    expect(long).toContain('Strasse');
  });

  it('When a field is missing, then no separator dangles and its tag is left out', () => {
    const template = rdsLinesTemplate('{{artist}} - {{title}}', undefined, true);
    expect(rdsLines(template, { dbid: 1, title: 'Only Title' })).toEqual(['TEXT=Only Title', 'RTP=01,00,09,00,00,00']);
  });

  it('When a name has no ASCII spelling, then no separator is left behind (issue 54 Low: TEXT= - )', () => {
    const template = rdsLinesTemplate('{{artist}} - {{title}}', '{{artist}} - {{title}}', true);
    expect(rdsLines(template, { dbid: 1, artist: '東京事変', title: '群青日和' })).toEqual(['TEXT=', 'RTP=00,00,00,00,00,00']);
    expect(rdsLines(template, { dbid: 2, artist: '東京事変', title: 'Gunjou Biyori' })).toEqual([
      'TEXT=Gunjou Biyori',
      'RTP=01,00,12,00,00,00',
      'DPS=Gunjou Biyori',
    ]);
  });

  it('When a tag would not fit the RT+ fields, then it is zeroed; spans follow the transliteration', () => {
    expect(
      rtPlusValue([
        { field: 'artist', start: 0, length: 10 },
        { field: 'title', start: 13, length: 40 },
      ]),
    ).toBe('01,13,39,04,00,09');
    expect(
      rtPlusValue([
        { field: 'artist', start: 0, length: 40 },
        { field: 'title', start: 43, length: 40 },
      ]),
    ).toBe('04,00,39,00,00,00');
    expect(toRdsAscii('Æon – Ø', [{ field: 'title', start: 6, length: 1 }])).toEqual({ text: 'AEon - O', spans: [{ field: 'title', start: 7, length: 1 }] });
  });
});

describe('dls file', () => {
  it('When a track is current, then the file carries DL Plus ARTIST and TITLE tags (length minus one), the toggle and the running bit', () => {
    const file = dlsFile(dlsTemplate(), { dbid: 3, artist: 'Daft Punk', title: 'Aerodynamic' }, { itemToggle: 1, itemRunning: 1 });
    expect(file).toBe(
      [
        '##### parameters { #####',
        'DL_PLUS=1',
        'DL_PLUS_ITEM_TOGGLE=1',
        'DL_PLUS_ITEM_RUNNING=1',
        'DL_PLUS_TAG=4 0 8',
        'DL_PLUS_TAG=1 12 10',
        '##### parameters } #####',
        'Daft Punk - Aerodynamic',
        '',
      ].join('\n'),
    );
    expect(itemToggleOf(file)).toBe(1);
  });

  it('When the label is longer than 128 characters, then it is cut and the tags stay inside it; nothing current clears the running bit', () => {
    const file = dlsFile(dlsTemplate(), { dbid: 4, artist: 'Ä'.repeat(100), title: 'T'.repeat(100) }, { itemToggle: 0, itemRunning: 1 });
    const label = file.split('\n').at(-2) ?? '';
    expect([...label]).toHaveLength(128);
    expect(file).toContain('DL_PLUS_TAG=4 0 99\nDL_PLUS_TAG=1 103 24\n');
    expect(dlsFile(dlsTemplate(), { dbid: 0 }, { itemToggle: 0, itemRunning: 1 })).toContain('DL_PLUS_ITEM_RUNNING=0\n##### parameters } #####\n\n');
  });
});

describe('what counts as a listen', () => {
  const started = Date.parse('2026-11-27T01:00:00Z');
  const play = (extra: Record<string, unknown>) => playOf({ dbid: 1, artist: 'A', title: 'T', started_at: '2026-11-27T01:00:00Z', ...extra }, 0);

  it('When a play ran half its length or 4 minutes, then it counts; a track under 30 s never does', () => {
    const threeMinutes = play({ duration: 180 });
    expect(threeMinutes?.startedAtMs).toBe(started);
    expect(listenVerdict(threeMinutes!, started + 89_000).counts).toBe(false);
    expect(listenVerdict(threeMinutes!, started + 90_000).counts).toBe(true);
    expect(listenVerdict(play({ duration: 1200 })!, started + 240_000).counts).toBe(true);
    expect(listenVerdict(play({ duration: 20 })!, started + 60_000)).toEqual({ counts: false, why: 'shorter than 30 s' });
    // No duration: a play of 30 s counts (it ended when the next began).
    expect(listenVerdict(play({})!, started + 30_000).counts).toBe(true);
  });

  it('When the record is not music or nobody listened, then it is never scrobbled; kind absent is music', () => {
    expect(neverScrobbled({ dbid: 1, artist: 'A', title: 'T' })).toBeUndefined();
    expect(neverScrobbled({ dbid: 1, artist: 'A', title: 'T', kind: 'jingle' })).toBe('not music (jingle)');
    expect(neverScrobbled({ dbid: 1, artist: 'A', title: 'T', listeners: { atp: 0, listener_seconds: 0, peak: 0 } })).toBe('nobody listening');
    expect(neverScrobbled({ dbid: 1, artist: 'A', title: 'T', listeners: null })).toBeUndefined();
    expect(neverScrobbled({ dbid: 1, artist: 'A', title: 'T', listeners: { atp: 3 } })).toBeUndefined();
  });

  it('When a listen is built, then it stays inside ListenBrainz MAX_LISTEN_SIZE whatever the fields hold', () => {
    const huge = playOf({ dbid: 1, artist: '𝄞'.repeat(5000), title: '𝄞'.repeat(5000), album: '𝄞'.repeat(5000), started_at: '2026-11-27T01:00:00Z' }, 0)!;
    expect(Buffer.byteLength(JSON.stringify(listenOf(huge, true)))).toBeLessThanOrEqual(10240);
    expect(listenOf(huge, false)).not.toHaveProperty('listened_at');
  });
});

describe('signatures', () => {
  it("When Last.fm's documented example is signed, then api_sig matches its value (format left out)", () => {
    const params = { method: 'auth.getSession', api_key: 'YOUR_API_KEY', token: 'YOUR_REQUESTED_TOKEN', format: 'json' };
    expect(lastFmSignature(params, 'YOUR_SECRET')).toBe('94539006DE89B3C6B3C030BB1E52B9C4'.toLowerCase());
  });

  it('When OBS sends a challenge and salt, then the answer is base64(sha256(base64(sha256(password + salt)) + challenge))', () => {
    const secret = createHash('sha256')
      .update('supersecretpassword' + 'lM1GncleQOaCu9lT1yeUZhFYnqhsLLP1G5lAGo3ixaI=')
      .digest('base64');
    const expected = createHash('sha256')
      .update(secret + '+IxH4CnCiqpX1rM9scsNynZzbOe4KhDeYcTNS3PDaeY=')
      .digest('base64');
    expect(obsAuthentication('supersecretpassword', 'lM1GncleQOaCu9lT1yeUZhFYnqhsLLP1G5lAGo3ixaI=', '+IxH4CnCiqpX1rM9scsNynZzbOe4KhDeYcTNS3PDaeY=')).toBe(
      expected,
    );
  });
});

describe('reach output config', () => {
  const check = (output: Record<string, unknown>) => () => configSchema.validateSync({ outputs: [{ name: 'one', ...output }] });
  it('When a key does not fit its type, then the config is refused with the key named', () => {
    expect(check({ type: 'url', url: 'https://example.org/?t={{title}}', body: 'a={{artist}}' })).toThrow(
      'outputs[0].body: a body is sent with method: POST only',
    );
    expect(check({ type: 'obs', url: 'ws://127.0.0.1:4455', input: 'Text', imageInput: 'Cover' })).toThrow('imageInput and imagePath go together');
    expect(check({ type: 'rds', url: 'http://127.0.0.1:1' })).toThrow('outputs[0].url: the wrong scheme for a rds output');
    expect(check({ type: 'url', url: 'https://example.org/', headers: { 'X-Key': 'a\nb' } })).toThrow('must map header names to text values');
    expect(check({ type: 'dls', path: '/tmp/dls.txt', format: '{{artist' })).toThrow('must be a template');
    expect(check({ type: 'url', url: 'https://example.org/?t={{title}}', method: 'POST', body: 'a={{artist}}', headers: { 'X-Key': 'k' } })).not.toThrow();
  });
});

describe('svc outputs add', () => {
  it.each(Object.keys(OUTPUT_BLOCKS))('When the %s block is pasted as it is, then the config schema takes it', (type) => {
    const parsed = yaml.load(outputBlock(type) ?? '') as { outputs: { type: string }[] };
    expect(parsed.outputs[0]?.type).toBe(type);
    expect(() => configSchema.validateSync(parsed, { strict: false })).not.toThrow();
  });

  it.each(OUTPUT_TYPES)('When svc outputs add %s prints its block, then the block names every key the type takes', (type) => {
    const block = outputBlock(type) ?? '';
    const named = (key: string) => new RegExp(`^ *(# )?(- )?${key}:`, 'm').test(block);
    expect(outputKeysOf(type).filter((key) => !named(key))).toEqual([]);
  });

  it.each(OUTPUT_TYPES)('When every commented key of the %s block is uncommented, then the config schema still takes it', (type) => {
    const uncommented = (outputBlock(type) ?? '').replace(/^ {4}# (\w+:)/gm, '    $1');
    const parsed = yaml.load(uncommented) as { outputs: Record<string, unknown>[] };
    expect(Object.keys(parsed.outputs[0] ?? {}).sort()).toEqual([...outputKeysOf(type)].sort());
    expect(() => configSchema.validateSync(parsed, { strict: false })).not.toThrow();
  });

  it('When an output type exists, then svc outputs add has a block for it, and for no other', () => {
    expect(Object.keys(OUTPUT_BLOCKS).sort()).toEqual([...OUTPUT_TYPES].sort());
  });
});
