// How a value is written into each kind of file without breaking its layout (docs/reports.md
// "Names in the files"): names are kept as stored, never upper-cased or abbreviated; only the
// characters a layout reserves are taken out, a cell a spreadsheet would run as a formula is
// neutralised, and the ASCII-only layouts transliterate. Pure.

import { asciiSpelling, neutralised } from '../domain/report-text';

export { asciiSpelling, neutralised, startsFormula } from '../domain/report-text';

/** Line breaks never belong inside one field of a line-based file. */
function oneLine(value: string): string {
  return value.replace(/\r\n|[\r\n\u2028\u2029]/g, ' ');
}

const ascii = (value: string): string => asciiSpelling(value).text;

const CARET_RESERVED = /[|^\t\r\n\u2028\u2029]/;

/** ASCII, not starting like a formula (FORMULA_START in domain/report-text.ts), none of CARET_RESERVED: caretField's answer is the value itself. */
const PLAIN_CARET = /^(?![=+\-@\t\r])[^|^\t\r\n\u0080-\uffff]*$/;

/**
 * SoundExchange text (37 CFR 370.4(e)(6), (e)(8)): ASCII, `^` and `|` removed (the layout has no
 * escape), a tab made a space, a formula neutralised, wrapped in carets.
 */
export function caretField(value: string | undefined): string {
  if (value === undefined) return '^^';
  // Most names are ASCII with nothing to take out or neutralise: one test, written as they are (a census writes seven fields per recording).
  if (PLAIN_CARET.test(value)) return `^${value}^`;
  // Most names hold none of the reserved characters: one test instead of three replacements (a census writes seven fields per recording).
  const safe = neutralised(value);
  const text = CARET_RESERVED.test(safe) ? oneLine(safe).replace(/[|^]/g, '').replace(/\t/g, ' ') : safe;
  return `^${ascii(text)}^`;
}

/** Tab-delimited files: a tab inside a value becomes a space; a formula is neutralised. */
export function tabField(value: string | undefined): string {
  return oneLine(neutralised(value ?? '')).replace(/\t/g, ' ');
}

/** RFC 4180: quoted when it holds a comma, a quote or a line break; quotes doubled; a formula neutralised. */
export function csvField(value: string | number | undefined): string {
  const text = value === undefined ? '' : typeof value === 'number' ? String(value) : neutralised(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * Fixed-width ASCII files (BMI): transliterated, cut or padded with spaces to `width` bytes; line
 * breaks and tabs become spaces; a formula neutralised.
 */
export function fixedField(value: string | undefined, width: number, align: 'left' | 'right' = 'left'): string {
  const text = ascii(oneLine(neutralised(value ?? '')).replace(/\t/g, ' ')).slice(0, width);
  const padding = ' '.repeat(width - text.length);
  return align === 'left' ? text + padding : padding + text;
}

/** Several writers as one field. */
export function joinNames(names: readonly string[] | undefined): string {
  return (names ?? []).join(', ');
}
