// How a value is written into each kind of file without breaking its layout (docs/reports.md
// "Names in the files"): names are kept as stored, never upper-cased or abbreviated; only the
// characters a layout reserves are taken out. Pure.

/** Line breaks never belong inside one field of a line-based file. */
function oneLine(value: string): string {
  return value.replace(/\r\n|[\r\n\u2028\u2029]/g, ' ');
}

const CARET_RESERVED = /[|^\t\r\n\u2028\u2029]/;

/** SoundExchange text: `^` and `|` removed (the layout has no escape), a tab made a space, wrapped in carets. */
export function caretField(value: string | undefined): string {
  // Most names hold none of the reserved characters: one test instead of three replacements (a census writes seven fields per recording).
  if (value === undefined || !CARET_RESERVED.test(value)) return `^${value ?? ''}^`;
  return `^${oneLine(value).replace(/[|^]/g, '').replace(/\t/g, ' ')}^`;
}

/** Tab-delimited files: a tab inside a value becomes a space. */
export function tabField(value: string | undefined): string {
  return oneLine(value ?? '').replace(/\t/g, ' ');
}

/** RFC 4180: quoted when it holds a comma, a quote or a line break; quotes doubled. */
export function csvField(value: string | number | undefined): string {
  const text = value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * Fixed-width files: cut or padded with spaces to `width` characters (code points, never half a
 * surrogate pair); line breaks and tabs become spaces.
 */
export function fixedField(value: string | undefined, width: number, align: 'left' | 'right' = 'left'): string {
  const chars = Array.from(oneLine(value ?? '').replace(/\t/g, ' ')).slice(0, width);
  const padding = ' '.repeat(width - chars.length);
  return align === 'left' ? chars.join('') + padding : padding + chars.join('');
}

/** Several writers as one field. */
export function joinNames(names: readonly string[] | undefined): string {
  return (names ?? []).join(', ');
}
