// The one template language (CLI `--format`, `GET /v1/last.txt?format=`, outputs), over a
// /v1/last object: `{{field}}` and `{field}` both stand for the field's value (What's Now
// Playing writes the first, the CLI the second). Pure: no I/O.

import { closestName } from './edit-distance';
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

/**
 * Compiles a template once; a field the track lacks renders empty, and so does the punctuation
 * that only framed it (docs/first-hour.md "Templates"): `{{title}} ({{album}})` gives `Title`, not
 * `Title ()`; `{{artist}} - {{title}}` without an artist gives `Title`. `year` falls back to the
 * year of `date`.
 */
export function compileTemplate(source: string): Template {
  const parts = parseTemplate(source);
  return (track) => {
    const rendered = parts.map((part) => ('text' in part ? { text: part.text } : { field: part.field, value: renderField(track, part.field) }));
    return dropEmptyFieldFrames(rendered)
      .map((part) => ('text' in part ? part.text : part.value))
      .join('');
  };
}

type RenderedPart = { text: string } | { field: string; value: string };

const CLOSING_BRACKET: Readonly<Record<string, string>> = { '(': ')', '[': ']', '<': '>', '«': '»', '"': '"', '“': '”' };
/**
 * A separator written for people between two fields: punctuation followed by a space (` - `,
 * `, `, ` | `), or spaces. A tab or a bare `|` or `,` is a column of a machine format and stays.
 */
const TRAILING_SEPARATOR = /(?: *[-–—|/,;:·•~]+ +| +)$/;
const LEADING_SEPARATOR = /^(?: *[-–—|/,;:·•~]+ +| +)/;

/** Removes, for each empty field, the bracket pair around it or the separator that joined it to a neighbour. */
function dropEmptyFieldFrames(rendered: RenderedPart[]): RenderedPart[] {
  const parts = rendered.map((part) => ({ ...part }));
  const isField = (index: number) => index >= 0 && index < parts.length && 'field' in parts[index];
  parts.forEach((part, index) => {
    if (!('field' in part) || part.value !== '') return;
    const before = parts[index - 1];
    const after = parts[index + 1];
    const beforeText = before && 'text' in before ? before : undefined;
    const afterText = after && 'text' in after ? after : undefined;
    const opening = beforeText ? /\s*(\S)$/.exec(beforeText.text) : null;
    const closing = opening ? CLOSING_BRACKET[opening[1] ?? ''] : undefined;
    if (beforeText && afterText && opening && closing && afterText.text.startsWith(closing)) {
      beforeText.text = beforeText.text.slice(0, opening.index);
      afterText.text = afterText.text.slice(closing.length);
    } else if (beforeText && isField(index - 2) && TRAILING_SEPARATOR.test(beforeText.text)) {
      beforeText.text = beforeText.text.replace(TRAILING_SEPARATOR, '');
    } else if (afterText && isField(index + 2) && LEADING_SEPARATOR.test(afterText.text)) {
      afterText.text = afterText.text.replace(LEADING_SEPARATOR, '');
    }
  });
  return parts;
}

/**
 * Compiles a template whose field values go through `encode` (the url output's
 * encodeURIComponent); the template's own text is kept as written.
 */
export function compileEncodedTemplate(source: string, encode: (value: string) => string): Template {
  const parts = parseTemplate(source);
  return (track) => parts.map((part) => ('text' in part ? part.text : encode(renderField(track, part.field)))).join('');
}

/** Where one field's value landed in a rendered template, in code points. */
export interface FieldSpan {
  field: string;
  start: number;
  length: number;
}

/** Renders parsed template parts and tells where each non-empty field value landed (DL Plus and RT+ tags). */
export function renderWithSpans(parts: readonly TemplatePart[], track: TrackObject): { text: string; spans: FieldSpan[] } {
  let text = '';
  let length = 0;
  const spans: FieldSpan[] = [];
  for (const part of parts) {
    const value = 'text' in part ? part.text : renderField(track, part.field);
    const size = [...value].length;
    if ('field' in part && size > 0) spans.push({ field: part.field, start: length, length: size });
    text += value;
    length += size;
  }
  return { text, spans };
}

/** A separator left at either end by a missing field goes (as for stream titles), spans moved with the text. */
export function trimSeparators(text: string, spans: readonly FieldSpan[]): { text: string; spans: FieldSpan[] } {
  const chars = [...text];
  const head = /^(\s*[-–—|·:]\s*)+|^\s+/u.exec(text)?.[0] ?? '';
  const tail = /(\s*[-–—|·:]\s*)+$|\s+$/u.exec(text.slice(head.length))?.[0] ?? '';
  const start = [...head].length;
  const end = chars.length - [...tail].length;
  const kept = spans
    .map((span) => ({ ...span, start: Math.max(span.start, start) - start, length: Math.min(span.start + span.length, end) - Math.max(span.start, start) }))
    .filter((span) => span.length > 0);
  return { text: chars.slice(start, end).join(''), spans: kept };
}

/** The field names a template uses, in order (a field used twice is listed once). */
function templateFields(source: string): string[] {
  return [...new Set(parseTemplate(source).flatMap((part) => ('field' in part ? [part.field] : [])))];
}

function renderField(track: TrackObject, field: string): string {
  // Only the track's own fields: `{constructor}` or `{toString}` must not reach Object.prototype.
  const value = Object.hasOwn(track, field) ? track[field] : undefined;
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
  const inherited = fields.filter((field) => field in Object.prototype);
  if (inherited.length > 0) {
    throw new TemplateError(`${inherited.map((field) => `{{${field}}}`).join(', ')} is not a track field: use {{artist}}, {{title}}, {{album}} ...`);
  }
  if (fields.some((field) => KNOWN_TEMPLATE_FIELDS.has(field))) return;
  const named = fields.length === 0 ? 'names no field' : `names no field svc knows (${fields.map((field) => `{{${field}}}`).join(', ')})`;
  throw new TemplateError(`the template ${named}: use {{artist}}, {{title}}, {{album}}, {{date}}, {{year}}, {{genre}}, {{bpm}} ...`);
}

/**
 * The fields a template names that svc does not know, each with the known field it most likely
 * meant: `{{artst}} - {{title}}` prints only the title (the separator goes with the empty field),
 * so a typo next to a known field would pass unseen (docs/first-hour.md "Templates"). Custom
 * fields (`--field mood=calm`) are unknown too, so this is a warning, never a refusal.
 */
export function unknownTemplateFields(source: string): { field: string; suggestion?: string }[] {
  return templateFields(source)
    .filter((field) => !KNOWN_TEMPLATE_FIELDS.has(field))
    .map((field) => {
      const suggestion = closestName(field, KNOWN_TEMPLATE_FIELDS);
      return suggestion === undefined ? { field } : { field, suggestion };
    });
}

/** One line saying which fields of a template svc does not know, or null when it knows them all. */
export function unknownFieldsWarning(source: string): string | null {
  const unknown = unknownTemplateFields(source);
  if (unknown.length === 0) return null;
  const named = unknown.map(({ field, suggestion }) => `{{${field}}}${suggestion ? ` (did you mean {{${suggestion}}}?)` : ''}`).join(', ');
  const one = unknown.length === 1;
  return `${named} ${one ? 'is no field' : 'are no fields'} svc knows: ${one ? 'it stays' : 'they stay'} empty unless a track carries ${one ? 'such a custom field' : 'such custom fields'}`;
}
