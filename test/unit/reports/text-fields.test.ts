import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { asciiSpelling, caretField, csvField, fixedField, tabField } from '../../../src/reports/text-fields';
import { addDays, isCalendarDate, startOfLocalDay } from '../../../src/reports/local-time';
import { addressWithoutPort } from '../../../src/reports/formats/npr-streams';
import { headerRecord, trailerRecord } from '../../../src/reports/formats/bmi';
import { makeRun, US_SETTINGS } from '../../helpers/reports';

describe('names in every layout', () => {
  const name = 'Caret ^ | Tab\t"Quote", comma — 日本語 Ελληνικά';

  it('When a name holds reserved characters, then each layout takes out only what it reserves', () => {
    expect(caretField(name)).toBe('^Caret   Tab "Quote", comma - ??? Ellinika^');
    expect(tabField(name)).toBe('Caret ^ | Tab "Quote", comma — 日本語 Ελληνικά');
    expect(csvField(name)).toBe('"Caret ^ | Tab\t""Quote"", comma — 日本語 Ελληνικά"');
    expect(tabField('two\r\nlines')).toBe('two lines');
  });

  it('When a fixed-width field is written, then it is ASCII, so its width in characters is its width in bytes', () => {
    expect(fixedField('𝄞𝄞𝄞', 2)).toBe('??');
    expect(fixedField('Sigur Rós', 12)).toBe('Sigur Ros   ');
    expect(Buffer.byteLength(fixedField('Дельфин 坂本龍一', 40))).toBe(40);
    expect(fixedField('ab', 4)).toBe('ab  ');
    expect(fixedField('ab', 4, 'right')).toBe('  ab');
  });
});

describe('spreadsheet formulas and ASCII', () => {
  it.each(['=HYPERLINK("http://x.example","y")', '+1+1', '-2+3', '@SUM(A1)', '\tTAB', '\rCR'])(
    'When a cell starts like a formula (%j), then every text layout writes it with a leading quote (OWASP)',
    (value) => {
      expect(tabField(value).startsWith("'")).toBe(true);
      expect(csvField(value).replace(/^"/, '').startsWith("'")).toBe(true);
      expect(caretField(value).startsWith("^'")).toBe(true);
      expect(fixedField(value, 60).startsWith("'")).toBe(true);
    },
  );

  it('When a name is not ASCII, then marks come off, Cyrillic and Greek follow ICAO 9303, and the rest is marked untransliterable', () => {
    expect(asciiSpelling('Sigur Rós – Hoppípolla')).toEqual({ text: 'Sigur Ros - Hoppipolla', untransliterable: false });
    expect(asciiSpelling('Straße Øresund Þór')).toEqual({ text: 'Strasse Oresund Thor', untransliterable: false });
    expect(asciiSpelling('Дельфин Мистерия звука')).toEqual({ text: 'Delfin Misteriia zvuka', untransliterable: false });
    expect(asciiSpelling('Ελληνικά')).toEqual({ text: 'Ellinika', untransliterable: false });
    expect(asciiSpelling('坂本龍一')).toEqual({ text: '????', untransliterable: true });
    expect(csvField(-3)).toBe('-3');
  });
});

describe('local dates', () => {
  it('When a day begins in New York, London or Sydney, then the instant accounts for the offset of that day', () => {
    expect(new Date(startOfLocalDay('2026-10-01', 'America/New_York')).toISOString()).toBe('2026-10-01T04:00:00.000Z');
    expect(new Date(startOfLocalDay('2026-12-01', 'America/New_York')).toISOString()).toBe('2026-12-01T05:00:00.000Z');
    expect(new Date(startOfLocalDay('2026-10-25', 'Europe/London')).toISOString()).toBe('2026-10-24T23:00:00.000Z');
    expect(new Date(startOfLocalDay('2026-10-26', 'Europe/London')).toISOString()).toBe('2026-10-26T00:00:00.000Z');
    expect(new Date(startOfLocalDay('2026-10-04', 'Australia/Sydney')).toISOString()).toBe('2026-10-03T14:00:00.000Z');
  });

  it('When midnight does not exist (a DST gap at 00:00), then the day begins at its first instant', () => {
    // Chile moves from 00:00 to 01:00 on 2026-09-06.
    expect(new Date(startOfLocalDay('2026-09-06', 'America/Santiago')).toISOString()).toBe('2026-09-06T04:00:00.000Z');
  });

  it('When dates are checked, then only real calendar dates pass', () => {
    expect(isCalendarDate('2026-02-28')).toBe(true);
    expect(isCalendarDate('2026-02-29')).toBe(false);
    expect(isCalendarDate('2026-2-1')).toBe(false);
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
  });
});

describe('small pieces of the layouts', () => {
  it('When an address carries a port, then the NPR/DS log writes it without', () => {
    expect(addressWithoutPort('203.0.113.9:51234')).toBe('203.0.113.9');
    expect(addressWithoutPort('[2001:db8::1]:443')).toBe('2001:db8::1');
    expect(addressWithoutPort('2001:db8::1')).toBe('2001:db8::1');
  });

  it('When the BMI header and trailer are written, then they have the record widths of the EMR layout', () => {
    const header = headerRecord(makeRun('bmi', '2026-10-01', '2026-10-31', US_SETTINGS));
    expect(header).toHaveLength(109 + 2);
    expect(header.endsWith('\r\n')).toBe(true);
    const golden = readFileSync(join(__dirname, '../../fixtures/reports/bmi.txt'), 'utf8').split('\r\n');
    const records = golden.filter((line) => line.startsWith('FMDT'));
    // Bytes, not characters: the fixed log's Cyrillic names and Han writer are in these records, transliterated or `?`.
    expect(records.some((record) => record.includes('????'))).toBe(true);
    for (const record of records) expect([Buffer.byteLength(record, 'utf8'), /^[\x20-\x7e]*$/.test(record)]).toEqual([279, true]);
    expect(trailerRecord(7)).toBe(`TRLR000000000007${' '.repeat(23)}\r\n`);
  });
});
