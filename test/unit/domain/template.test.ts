import { TemplateError, compileTemplate, oneLine, parseTemplate, requireKnownField, trackLineParts, unknownFieldsWarning } from '../../../src/domain/template';
import { humanTrackLine } from '../../../src/cli/output';

const track = { dbid: 12, artist: 'Daft Punk', title: 'One More Time', album: 'Discovery', date: '2001-03-12', bpm: 123, genres: ['house', 'french house'] };

describe('compileTemplate', () => {
  test.each([
    ['{artist} - {title}', 'Daft Punk - One More Time'],
    ['{ artist }|{missing}|', 'Daft Punk||'],
    ['{bpm} BPM, {year}', '123 BPM, 2001'],
    ['{genres}', 'house, french house'],
    ['{{artist}} - {{ title }}', 'Daft Punk - One More Time'],
    ['{{artist}}/{title}/{{missing}}', 'Daft Punk/One More Time/'],
    ['no placeholders', 'no placeholders'],
    ['', ''],
  ])('When the template is %j, then it renders %j', (template, expected) => {
    expect(compileTemplate(template)(track)).toBe(expected);
  });

  test.each([
    ['{{title}} ({{album}})', { title: 'Track' }, 'Track'],
    ['{{title}} ({{album}})', { title: 'Track', album: 'LP' }, 'Track (LP)'],
    ['{{artist}} - {{title}}', { title: 'Track' }, 'Track'],
    ['{{artist}} - {{title}}', { artist: 'Artist' }, 'Artist'],
    ['{{artist}} - {{album}} - {{title}}', { artist: 'A', title: 'T' }, 'A - T'],
    ['Now: {{artist}} - {{title}} [{{year}}]', { title: 'T' }, 'Now: T'],
    ['{{artist}}, {{title}}', { artist: 'A' }, 'A'],
    ['{{artist}}\t{{album}}\t{{title}}', { artist: 'A', title: 'T' }, 'A\t\tT'],
    ['{{artist}}|{{album}}|{{title}}', { artist: 'A', title: 'T' }, 'A||T'],
  ])('When %j meets a track without some fields, then their brackets and separators go (%j gives %j)', (template, fields, expected) => {
    expect(compileTemplate(template)(fields)).toBe(expected);
  });

  test('When a template names a name every object has ({constructor}, {toString}, {valueOf}), then it renders nothing of it', () => {
    expect(compileTemplate('{{title}}{constructor}{toString}{valueOf}{__proto__}')({ title: 'T' })).toBe('T');
  });

  test('When the track has its own year field, then {year} is that field', () => {
    expect(compileTemplate('{year}')({ year: 1999, date: '2001' })).toBe('1999');
  });

  test('When a value holds control characters, then they become spaces', () => {
    expect(compileTemplate('[{title}]')({ title: 'a\nb\u001b[31mc' })).toBe('[a b [31mc]');
  });

  test.each(['{artist', 'artist}', '{}', '{ }', '{{}}', '{a{b}', 'x } y', '{{artist}', '{artist}}', '{{{artist}}}'])(
    'When the template is %j, then it is a TemplateError',
    (template) => {
      expect(() => compileTemplate(template)).toThrow(TemplateError);
    },
  );

  test('Both placeholder forms parse to the same parts, and the fields are listed once each', () => {
    expect(parseTemplate('{{artist}} - {artist}!')).toEqual([{ field: 'artist' }, { text: ' - ' }, { field: 'artist' }, { text: '!' }]);
    expect(() => requireKnownField('{{titel}} {artsit} {titel}')).toThrow('names no field svc knows ({{titel}}, {{artsit}})');
    expect(() => requireKnownField('{{titel}} {artist}')).not.toThrow();
  });
});

describe('the human line', () => {
  test.each([
    [{ artist: 'A', title: 'T', album: 'Al', date: '1999' }, 'A - T (Al, 1999)'],
    [{ artist: 'A', title: 'T' }, 'A - T'],
    [{ title: 'T', date: '03/12/2001' }, 'T (2001)'],
    [{ artist: 'A', album: 'Al' }, 'A (Al)'],
    [{ album: 'Al' }, '(Al)'],
    [{ dbid: 4, isrc: 'GBAYE0601498' }, 'untitled #4'],
    [{ artist: '  ', title: 'T', date: 'unknown' }, 'T'],
  ])('When the track is %j, then the line is %j', (fields, expected) => {
    expect(humanTrackLine(fields)).toBe(expected);
  });

  test('When the parts are asked for, then head and detail are split', () => {
    expect(trackLineParts(track)).toEqual({ head: 'Daft Punk - One More Time', detail: 'Discovery, 2001' });
  });

  test('{{year}} is the first four-digit run of the date, and nothing from a date without one', () => {
    const year = compileTemplate('{{year}}');
    const dates = ['2001-03-12', '12.03.2001', 1998, '99', undefined];
    expect(dates.map((date) => year({ date }))).toEqual(['2001', '2001', '1998', '', '']);
  });

  // Round three: U+2028 and U+2029 broke "one line" in chat bots; U+202E made a title read backwards.
  test('oneLine turns the Unicode line separators into spaces and removes bidirectional overrides', () => {
    expect(oneLine('Artist\u2028Title\u2029End')).toBe('Artist Title End');
    expect(oneLine('\u202eeltiT\u202c - \u2066x\u2069')).toBe('eltiT - x');
  });

  test('oneLine trims and collapses control characters', () => {
    expect(oneLine(' a\r\n\tb\u0007 ')).toBe('a b');
  });
});

describe('requireKnownField', () => {
  test.each(['{constructor}', '{toString}', '{valueOf}', '{{title}} {constructor}', '{hasOwnProperty}'])(
    'When the template %j names what every object has, then it is a TemplateError, not a field',
    (template) => {
      expect(() => requireKnownField(template)).toThrow(/is not a track field/);
    },
  );
});

describe('unknownFieldsWarning', () => {
  it('When every field is known, then nothing is said', () => {
    expect(unknownFieldsWarning('{{artist}} - {{title}} ({year})')).toBeNull();
  });

  it('When a field is a near miss of a known one, then the warning names it and the field meant', () => {
    expect(unknownFieldsWarning('{{artst}} - {{title}}')).toBe(
      '{{artst}} (did you mean {{artist}}?) is no field svc knows: it stays empty unless a track carries such a custom field',
    );
    expect(unknownFieldsWarning('{{artst}} - {{titel}} {{showname}}')).toBe(
      '{{artst}} (did you mean {{artist}}?), {{titel}} (did you mean {{title}}?), {{showname}} are no fields svc knows: they stay empty unless a track carries such custom fields',
    );
  });
});
