// The one template language (CLI `--format`, `GET /v1/last.txt?format=`, outputs), over a
// /v1/last object: `{{field}}` and `{field}` both stand for the field's value (What's Now
// Playing writes the first, the CLI the second). Pure: no I/O.

import { NUMERIC_FIELDS, TEXT_FIELDS, fieldText } from './track';

export type TrackObject = Readonly<Record<string, unknown>>;
export type Template = (track: TrackObject) => string;

export class TemplateError extends Error {
  override name = 'TemplateError';
}

export type TemplatePart = { text: string } | { field: string };

// `{{ name }}` first, so that `{{artist}}` is one placeholder and not a brace around `{artist}`.
const PLACEHOLDER = /\{\{([^{}]*)\}\}|\{([^{}]*)\}/y;

/**
 * Splits a template into literal text and field names. Every brace belongs to a placeholder: a
 * stray or empty one is an error, so a typo is reported instead of printed.
 */
export function parseTemplate(source: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let text = '';
  for (let i = 0; i < source.length;) {
    const char = source[i];
    if (char !== '{' && char !== '}') {
      text += char;
      i++;
      continue;
    }
    PLACEHOLDER.lastIndex = i;
    const match = char === '{' ? PLACEHOLDER.exec(source) : null;
    const field = (match?.[1] ?? match?.[2] ?? '').trim();
    if (!match || field === '') {
      throw new TemplateError(`unmatched or empty "${char}" at position ${i + 1} (placeholders are {field} or {{field}})`);
    }
    if (text) parts.push({ text });
    text = '';
    parts.push({ field });
    i += match[0].length;
  }
  if (text) parts.push({ text });
  return parts;
}

/** Compiles a template once; a field the track lacks renders empty; `year` falls back to the year of `date`. */
export function compileTemplate(source: string): Template {
  const parts = parseTemplate(source);
  return (track) => parts.map((part) => ('text' in part ? part.text : renderField(track, part.field))).join('');
}

/** The field names a template uses, in order (a field used twice is listed once). */
function templateFields(source: string): string[] {
  return [...new Set(parseTemplate(source).flatMap((part) => ('field' in part ? [part.field] : [])))];
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
function yearOf(date: unknown): string {
  if (typeof date !== 'string' && typeof date !== 'number') return '';
  return /\d{4}/.exec(String(date))?.[0] ?? '';
}

/**
 * Values come from whoever submitted the track: control characters (newlines, terminal
 * escapes) and the Unicode line and paragraph separators (U+2028, U+2029) become spaces so that
 * one track stays one line and cannot drive the terminal; the bidirectional overrides and
 * isolates (U+202A-U+202E, U+2066-U+2069), which make a line read backwards, are removed.
 */
export function oneLine(text: string): string {
  return (
    text
      .replace(/[\u202a-\u202e\u2066-\u2069]/g, '')
      // eslint-disable-next-line no-control-regex -- matching control characters is the point
      .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
      .trim()
  );
}

export interface TrackLineParts {
  /** "Artist - Title" (either may be missing), or '' */
  head: string;
  /** "(Album, Year)" without the parentheses, or '' */
  detail: string;
}

/** The pieces of `Artist - Title (Album, Year)`, empty parts left out. */
export function trackLineParts(track: TrackObject): TrackLineParts {
  const text = (key: string) => oneLine(fieldText(track, key) ?? '');
  const head = [text('artist'), text('title')].filter(Boolean).join(' - ');
  const detail = [text('album'), yearOf(track.date)].filter(Boolean).join(', ');
  return { head, detail };
}

/**
 * Fields a template may name besides the track's text and number fields: `year` (from date),
 * what /v1/last and /v1/history add (dbid, received_at), and What's Now Playing's usual extras.
 */
const EXTRA_TEMPLATE_FIELDS = ['year', 'dbid', 'received_at', 'deck', 'artistwebsites', 'duration_hhmmss'];

/** Every field name a template may use without being a likely typo. */
const KNOWN_TEMPLATE_FIELDS: ReadonlySet<string> = new Set([...TEXT_FIELDS, ...NUMERIC_FIELDS, ...EXTRA_TEMPLATE_FIELDS]);

/**
 * A template that names no field svc knows (`{{artsit}}`, or plain text with no placeholder)
 * would print the same line for every track: that is reported instead (docs/first-hour.md
 * "Templates"). One known field is enough; the others may be custom fields.
 */
export function requireKnownField(source: string): void {
  const fields = templateFields(source);
  if (fields.some((field) => KNOWN_TEMPLATE_FIELDS.has(field))) return;
  const named = fields.length === 0 ? 'names no field' : `names no field svc knows (${fields.map((field) => `{{${field}}}`).join(', ')})`;
  throw new TemplateError(`the template ${named}: use {{artist}}, {{title}}, {{album}}, {{date}}, {{year}}, {{genre}}, {{bpm}} ...`);
}
