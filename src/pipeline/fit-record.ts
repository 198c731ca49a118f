import type { FieldValue, TrackFields } from '../domain/track';
import { AppError } from '../errors';

// A stored record has a size bound (docs/limits-and-load.md "Records"): its JSON in UTF-8. When a
// record is over, the largest text values are cut to one common size, so small fields stay whole
// and no single field can crowd the others out. Pure.

/**
 * The record cut to at most `maxBytes` of JSON, one warning per cut field (in the
 * `Field '<field>' truncated from ...` style of docs/limits-and-load.md "Records"). Throws 413
 * when even its field names and numbers, with every text value gone, are over the limit.
 */
export function fitRecord(fields: TrackFields, maxBytes: number, warnings: string[], uncut: ReadonlySet<string> = NOTHING): TrackFields {
  const total = jsonBytes(fields);
  if (total <= maxBytes) return fields;
  const cuttable = Object.entries(fields)
    .filter((entry): entry is [string, string | string[]] => !uncut.has(entry[0]) && isText(entry[1]))
    .map(([key, value]) => ({ key, value, bytes: jsonBytes(value) }));
  const fixedBytes = total - cuttable.reduce((sum, entry) => sum + entry.bytes, 0);
  if (fixedBytes > maxBytes) {
    throw new AppError('RECORD_TOO_LARGE', `The record cannot fit in ${maxBytes} bytes: its field names and numbers alone take ${fixedBytes}`);
  }
  const cap = commonCap(
    cuttable.map((entry) => entry.bytes),
    maxBytes - fixedBytes,
  );
  const fitted: TrackFields = { ...fields };
  for (const { key, value, bytes } of cuttable) {
    if (bytes <= cap) continue;
    const cut = Array.isArray(value) ? cutList(value, cap) : cutString(value, cap);
    if (cut === undefined) {
      delete fitted[key];
      warnings.push(`Field '${key}' dropped: the record is over ${maxBytes} bytes`);
      continue;
    }
    fitted[key] = cut;
    warnings.push(
      Array.isArray(value)
        ? `Field '${key}' truncated from ${value.length} to ${(cut as string[]).length} items`
        : `Field '${key}' truncated from ${Array.from(value).length} to ${Array.from(cut as string).length} characters`,
    );
  }
  return fitted;
}

const NOTHING: ReadonlySet<string> = new Set();

/** UTF-8 bytes of a value's JSON. */
function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

function isText(value: FieldValue): value is string | string[] {
  return typeof value === 'string' || (Array.isArray(value) && value.every((element) => typeof element === 'string'));
}

/** The largest per-value size so that the values, each cut to it, sum to at most `budget`. */
function commonCap(sizes: readonly number[], budget: number): number {
  const ascending = [...sizes].sort((a, b) => a - b);
  let spent = 0;
  for (let index = 0; index < ascending.length; index += 1) {
    const remaining = ascending.length - index;
    const cap = Math.floor((budget - spent) / remaining);
    if (ascending[index] > cap) return cap;
    spent += ascending[index];
  }
  return Number.POSITIVE_INFINITY;
}

/** The longest prefix, whole code points, whose JSON takes at most `maxBytes`; undefined when empty. */
function cutString(value: string, maxBytes: number): string | undefined {
  let bytes = 2; // the quotes
  let end = 0;
  for (const char of value) {
    bytes += jsonBytes(char) - 2;
    if (bytes > maxBytes) break;
    end += char.length;
  }
  return end === 0 ? undefined : value.slice(0, end);
}

/** The first elements whose JSON takes at most `maxBytes`, the last one cut if needed; undefined when empty. */
function cutList(values: readonly string[], maxBytes: number): string[] | undefined {
  const kept: string[] = [];
  let bytes = 2; // the brackets
  for (const element of values) {
    const separator = kept.length === 0 ? 0 : 1;
    const size = jsonBytes(element);
    if (bytes + separator + size <= maxBytes) {
      kept.push(element);
      bytes += separator + size;
      continue;
    }
    const cut = cutString(element, maxBytes - bytes - separator);
    if (cut !== undefined) kept.push(cut);
    break;
  }
  return kept.length === 0 ? undefined : kept;
}
