import { NUMERIC_FIELDS, REMOVED_FIELDS, REMOVED_FIELD_SUFFIXES, TEXT_FIELDS, type TrackFields } from '../domain/track';
import { shortName } from './parse';
import { fitRecord } from './fit-record';

// Stage 3: make submitted fields safe to store and show (docs/http-api.md;
// docs/decisions.md "HTTP behaviour"). Pure.

export interface SanitizeOptions {
  /** Longest string kept, in code points. */
  maxFieldLength: number;
  /** Most elements a list keeps (docs/limits-and-load.md "Records"). */
  maxListItems: number;
  /** Largest stored record, as UTF-8 JSON bytes; the biggest values are cut to fit. */
  maxRecordBytes: number;
}

export interface Sanitized {
  fields: TrackFields;
  warnings: string[];
  /** A submitted `coverurl`: never echoed, only ever fetched by the server (images). */
  submittedCoverUrl?: string;
  /**
   * Recognition inputs whole, before truncation: fpcalc fingerprints run to kilobytes and a cut
   * one identifies nothing. Used for lookups only; the stored field is the truncated one.
   */
  recognitionInput?: TrackFields;
}

/** Fields handed to recognition services untruncated (see `Sanitized.recognitionInput`). */
const RECOGNITION_FIELDS: ReadonlySet<string> = new Set(['fpcalcfingerprint']);

const MAX_FIELD_NAME_LENGTH = 128;

/** An answer lists at most this many warnings, then how many more there were (bounded reply size). */
const MAX_WARNINGS = 50;

export function sanitize(input: Readonly<Record<string, unknown>>, options: SanitizeOptions): Sanitized {
  const fields: TrackFields = {};
  const warnings: string[] = [];
  let submittedCoverUrl: string | undefined;
  let recognitionInput: TrackFields | undefined;

  for (const [rawKey, rawValue] of Object.entries(input)) {
    const key = rawKey.replaceAll('\0', '');
    if (isRemovedField(key) || rawValue === null || rawValue === undefined) continue;
    if (!isValidFieldName(key)) {
      warnings.push(`Field '${shortName(printable(key))}' dropped: invalid field name`);
      continue;
    }
    if (Array.isArray(rawValue) && !NUMERIC_FIELDS.has(key) && key !== 'coverurl') {
      const list = textList(key, rawValue, options, warnings);
      if (list !== undefined && list.length > 0) fields[key] = list;
      continue;
    }
    if (typeof rawValue === 'object') {
      warnings.push(`Field '${key}' dropped: ${Array.isArray(rawValue) ? 'expected a single value' : 'objects are not accepted'}`);
      continue;
    }

    if (NUMERIC_FIELDS.has(key)) {
      // A blank value (`bpm=` from a URL template) is absent, like a blank text field.
      if (typeof rawValue === 'string' && cleanString(rawValue) === '') continue;
      const number = toFiniteNumber(rawValue);
      if (number === undefined) warnings.push(`Field '${key}' dropped: not a finite number`);
      else fields[key] = number;
      continue;
    }

    if (typeof rawValue === 'string') {
      const text = cleanText(rawValue);
      if (text === undefined) continue;
      if (key === 'coverurl') {
        submittedCoverUrl = text;
        continue;
      }
      const { value, originalLength } = truncate(text, options.maxFieldLength);
      if (originalLength > options.maxFieldLength) {
        warnings.push(truncationWarning(key, originalLength, options.maxFieldLength));
        if (RECOGNITION_FIELDS.has(key)) recognitionInput = { ...recognitionInput, [key]: text };
      }
      fields[key] = value;
      continue;
    }

    if (TEXT_FIELDS.has(key)) {
      warnings.push(`Field '${key}' dropped: expected text`);
      continue;
    }
    if (typeof rawValue === 'number') {
      if (Number.isFinite(rawValue)) fields[key] = rawValue;
      else warnings.push(`Field '${key}' dropped: not a finite number`);
      continue;
    }
    if (typeof rawValue === 'boolean') {
      fields[key] = rawValue;
      continue;
    }
    warnings.push(`Field '${key}' dropped: unsupported value`);
  }

  const fitted = fitRecord(fields, options.maxRecordBytes, warnings);

  if (warnings.length > MAX_WARNINGS) {
    const more = warnings.length - MAX_WARNINGS;
    warnings.length = MAX_WARNINGS;
    warnings.push(`${more} more warning${more === 1 ? '' : 's'} not listed`);
  }
  const result: Sanitized = { fields: fitted, warnings };
  if (submittedCoverUrl !== undefined) result.submittedCoverUrl = submittedCoverUrl;
  if (recognitionInput !== undefined) result.recognitionInput = recognitionInput;
  return result;
}

/**
 * A list of text (docs/decisions.md "Lists and field types"): each element under the string rules,
 * empty ones dropped. Undefined (with a warning) when an element is not a string.
 */
function textList(key: string, values: readonly unknown[], options: SanitizeOptions, warnings: string[]): string[] | undefined {
  if (!values.every((element) => typeof element === 'string')) {
    warnings.push(`Field '${key}' dropped: a list may hold only text`);
    return undefined;
  }
  const kept: string[] = [];
  for (const element of values) {
    const text = cleanText(element);
    if (text === undefined) continue;
    const { value, originalLength } = truncate(text, options.maxFieldLength);
    if (originalLength > options.maxFieldLength) warnings.push(truncationWarning(key, originalLength, options.maxFieldLength));
    kept.push(value);
  }
  if (kept.length > options.maxListItems) {
    warnings.push(`Field '${key}' truncated from ${kept.length} to ${options.maxListItems} items`);
    kept.length = options.maxListItems;
  }
  return kept;
}

/** The cleaned string, or undefined when nothing worth keeping is left (blank, a `data:` URI). */
function cleanText(raw: string): string | undefined {
  const text = cleanString(raw);
  return text === '' || /^data:/i.test(text) ? undefined : text;
}

function truncationWarning(key: string, originalLength: number, max: number): string {
  return `Field '${key}' truncated from ${originalLength} to ${max} characters`;
}

export function isRemovedField(key: string): boolean {
  const lower = key.toLowerCase();
  return REMOVED_FIELDS.has(lower) || REMOVED_FIELD_SUFFIXES.some((suffix) => lower.endsWith(suffix));
}

// eslint-disable-next-line no-control-regex -- control characters are what it removes
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f]/g;

/**
 * Every C0 control character but tab and newline goes, anywhere in the string, like NUL (JSON
 * escapes each to 6 bytes and a terminal obeys them); lone surrogates become U+FFFD; ends are trimmed.
 */
function cleanString(value: string): string {
  return value.replace(CONTROL_CHARACTERS, '').toWellFormed().trim();
}

/** Cuts to `max` code points, so a surrogate pair is never split. */
function truncate(value: string, max: number): { value: string; originalLength: number } {
  // Fast path: a string of at most `max` UTF-16 units has at most `max` code points.
  if (value.length <= max) return { value, originalLength: countCodePoints(value) };
  const codePoints = Array.from(value);
  if (codePoints.length <= max) return { value, originalLength: codePoints.length };
  return { value: codePoints.slice(0, max).join(''), originalLength: codePoints.length };
}

function countCodePoints(value: string): number {
  let count = 0;
  for (let i = 0; i < value.length; i += 1) {
    const unit = value.charCodeAt(i);
    // A high surrogate followed by a low one is a single code point.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i += 1;
    }
    count += 1;
  }
  return count;
}

const NUMERIC_TEXT = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

/** A number, or a numeric string as GET sends it; anything not finite is undefined. */
function toFiniteNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.replaceAll('\0', '').trim();
  if (!NUMERIC_TEXT.test(text)) return undefined;
  const number = Number(text);
  return Number.isFinite(number) ? number : undefined;
}

function isValidFieldName(key: string): boolean {
  // eslint-disable-next-line no-control-regex -- a field name with control characters is refused
  return key.length > 0 && key.length <= MAX_FIELD_NAME_LENGTH && !/[\u0000-\u001f\u007f]/.test(key) && key.isWellFormed();
}

function printable(key: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it replaces
  return key.toWellFormed().replace(/[\u0000-\u001f\u007f]/g, '?');
}
