// `--format TEMPLATE` and the human one-liner, over a /v1/last object. Pure: no I/O.

export type TrackObject = Readonly<Record<string, unknown>>;
export type Template = (track: TrackObject) => string;

export class TemplateError extends Error {
  override name = 'TemplateError';
}

type Part = { text: string } | { field: string };

/**
 * Compiles `{field}` placeholders once. `{{` and `}}` are literal braces; a field the track
 * lacks renders empty; `{year}` falls back to the year of `date`. An unmatched brace is an
 * error, so a typo is reported instead of printed.
 */
export function compileTemplate(source: string): Template {
  const parts: Part[] = [];
  let text = '';
  for (let i = 0; i < source.length; i++) {
    const char = source[i];
    const next = source[i + 1];
    if ((char === '{' && next === '{') || (char === '}' && next === '}')) {
      text += char;
      i++;
    } else if (char === '{') {
      const end = source.indexOf('}', i + 1);
      const field = end === -1 ? '' : source.slice(i + 1, end).trim();
      if (end === -1 || field === '' || field.includes('{')) {
        throw new TemplateError(`unmatched or empty "{" at position ${i + 1} (write {{ for a literal brace)`);
      }
      if (text) parts.push({ text });
      text = '';
      parts.push({ field });
      i = end;
    } else if (char === '}') {
      throw new TemplateError(`unmatched "}" at position ${i + 1} (write }} for a literal brace)`);
    } else {
      text += char;
    }
  }
  if (text) parts.push({ text });
  return (track) => parts.map((part) => ('text' in part ? part.text : renderField(track, part.field))).join('');
}

function renderField(track: TrackObject, field: string): string {
  const value = track[field];
  if (value === undefined && field === 'year') return yearOf(track.date);
  return renderValue(value);
}

function renderValue(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return oneLine(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(renderValue).filter(Boolean).join(', ');
  return oneLine(JSON.stringify(value));
}

/** The year of a `date` field: its first four-digit run ("2001-03-12", "12/03/2001"). */
export function yearOf(date: unknown): string {
  if (typeof date !== 'string' && typeof date !== 'number') return '';
  return /\d{4}/.exec(String(date))?.[0] ?? '';
}

/**
 * Values come from whoever submitted the track: control characters (newlines, terminal
 * escapes) become spaces so that one track stays one line and cannot drive the terminal.
 */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
}

export interface TrackLineParts {
  /** "Artist - Title" (either may be missing), or '' */
  head: string;
  /** "(Album, Year)" without the parentheses, or '' */
  detail: string;
}

/** The pieces of `Artist - Title (Album, Year)`, empty parts left out. */
export function trackLineParts(track: TrackObject): TrackLineParts {
  const text = (key: string) => (typeof track[key] === 'string' ? oneLine(track[key]) : '');
  const head = [text('artist'), text('title')].filter(Boolean).join(' - ');
  const detail = [text('album'), yearOf(track.date)].filter(Boolean).join(', ');
  return { head, detail };
}
