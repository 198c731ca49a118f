import { asciiSpelling, startsFormula } from './report-text';
import { fieldText, fieldTexts, type TrackFields } from './track';

// A play's recording as the reports see it (docs/reports.md "Where the rows come from"): its names,
// the keys that group its plays, and the marks that tell the checks which plays may have a
// problem. Pure. The store keeps the keys and marks of each play next to it (written with the
// play, computed again for rows whose `REPORT_COLUMNS_VERSION` is older), so a report can group
// and sift a month's plays where they are stored instead of reading each one
// (docs/reports.md "Memory and speed").

/** The names a report writes for a recording; each trimmed and non-empty, or absent. */
export interface RecordingNames {
  artist?: string;
  title?: string;
  album?: string;
  label?: string;
  /** As submitted (its first, when a list); normalizedIsrc gives the written form. */
  isrc?: string;
}

/** A play's names from its stored metadata. */
export function recordingNamesOf(metadata: TrackFields): RecordingNames {
  // Read with every stored play: a list item that is not text (stored before validation, or by
  // another writer) is no ISRC rather than a failed write.
  const isrc: unknown = fieldTexts(metadata, 'isrc')[0];
  return {
    artist: fieldText(metadata, 'artist'),
    title: fieldText(metadata, 'title'),
    album: fieldText(metadata, 'album'),
    label: fieldText(metadata, 'label'),
    isrc: typeof isrc === 'string' ? isrc : undefined,
  };
}

export const ISRC_SHAPE = /^[A-Z]{2}[A-Z0-9]{3}[0-9]{7}$/;

/** An ISRC as the societies want it: no hyphens or spaces (`GB-AAA-12-00001` is written `GBAAA1200001`). */
export function normalizedIsrc(isrc: string | undefined): string | undefined {
  if (isrc === undefined) return undefined;
  if (ISRC_SHAPE.test(isrc)) return isrc;
  const bare = isrc.replace(/[-\s]/g, '').toUpperCase();
  return bare === '' ? undefined : bare;
}

/** The ISRC when it has the right shape once normalized, else undefined. */
export function validIsrc(isrc: string | undefined): string | undefined {
  const normalized = normalizedIsrc(isrc);
  return normalized !== undefined && ISRC_SHAPE.test(normalized) ? normalized : undefined;
}

/** One recording: its ISRC, else artist + title + album (docs/decisions.md "Reports"). */
export function recordingKey(names: RecordingNames): string {
  const isrc = validIsrc(names.isrc);
  if (isrc !== undefined) return `isrc:${isrc}`;
  return `names:${JSON.stringify([names.artist ?? '', names.title ?? '', names.album ?? ''])}`;
}

/**
 * The recording as the capitals check compares spellings: its ISRC, else artist and title in any
 * case (docs/reports.md "Checks").
 */
export function spellingKey(names: RecordingNames): string {
  // JSON, not a control character between the names: PostgreSQL's text holds no NUL.
  return validIsrc(names.isrc) ?? JSON.stringify([(names.artist ?? '').toLowerCase(), (names.title ?? '').toLowerCase()]);
}

/** Has letters with case, at least two, and none of them lower case. */
export function isAllCapitals(text: string): boolean {
  return !LOWER_CASE.test(text) && TWO_CAPITALS.test(text);
}

export const LOWER_CASE = /\p{Ll}/u;
const TWO_CAPITALS = /\p{Lu}.*\p{Lu}/su;

export const SPELLED_FIELDS = ['artist', 'title', 'album', 'label'] as const;
export const WRITTEN_FIELDS = ['artist', 'title', 'isrc', 'album', 'label'] as const;
export type WrittenField = (typeof WRITTEN_FIELDS)[number];

/** What a play's names let a check or a census skip, as bits of the stored `report_marks`. */
export const MARKS = {
  /** No artist or no title: the checks name the play. */
  noName: 1,
  /** No ISRC of the right shape, and no album or no label: SoundExchange and PPL cannot identify it. */
  unidentified: 2,
  /** A name in capitals: the capitals check compares it with the recording's other spellings. */
  capitals: 4,
  /** A name with characters that have no ASCII spelling (SoundExchange and BMI write ASCII). */
  notAscii: 256,
  /** A name a spreadsheet would read as a formula (written neutralised; the check notes it). */
  formula: 512,
  /** A record recognition made (its `recognition` field is set): the check's notes read only these (docs/recognition.md). */
  recognised: 1024,
} as const;

/** One bit per name a census line writes, set when the play has it (its line takes each from the first play that does). */
export const NAME_MARKS: Readonly<Record<WrittenField, number>> = { artist: 8, title: 16, isrc: 32, album: 64, label: 128 };

const missing = (value: string | undefined): boolean => (value ?? '').trim() === '';

/** The marks of one play's names (MARKS). */
export function recordingMarks(names: RecordingNames): number {
  let marks = 0;
  if (missing(names.artist) || missing(names.title)) marks |= MARKS.noName;
  if (validIsrc(names.isrc) === undefined && (missing(names.album) || missing(names.label))) marks |= MARKS.unidentified;
  if (SPELLED_FIELDS.some((field) => names[field] !== undefined && isAllCapitals(names[field]))) marks |= MARKS.capitals;
  if (SPELLED_FIELDS.some((field) => names[field] !== undefined && asciiSpelling(names[field]).untransliterable)) marks |= MARKS.notAscii;
  if (SPELLED_FIELDS.some((field) => startsFormula(names[field]))) marks |= MARKS.formula;
  for (const field of WRITTEN_FIELDS) if (writtenName(names, field) !== undefined) marks |= NAME_MARKS[field];
  return marks;
}

/** A name as a census line writes it: the ISRC normalized, the others as they are; undefined when empty. */
export function writtenName(names: RecordingNames, field: WrittenField): string | undefined {
  const value = field === 'isrc' ? normalizedIsrc(names.isrc) : names[field];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * Bumped whenever recordingKey, spellingKey or the marks change what they answer: the store
 * computes its stored columns again for rows of an older version before a report reads them
 * (3: the writers count for MARKS.notAscii; 4: MARKS.recognised).
 */
export const REPORT_COLUMNS_VERSION = 4;

/** The stored report columns of one play. */
export interface RecordingColumns {
  recordingKey: string;
  spellingKey: string;
  marks: number;
}

/** A play's writers from its stored metadata: `writers`, else the one `composer`; none when neither is set. */
export function writersOf(metadata: TrackFields): string[] | undefined {
  const writers = fieldTexts(metadata, 'writers');
  if (writers.length > 0) return writers;
  const composer = fieldText(metadata, 'composer');
  return composer === undefined ? undefined : [composer];
}

export function recordingColumnsOf(metadata: TrackFields): RecordingColumns {
  const names = recordingNamesOf(metadata);
  // BMI writes the writers in ASCII too: one without a spelling makes the play a candidate of the check.
  const writers = writersOf(metadata) ?? [];
  const marks =
    recordingMarks(names) |
    (writers.some((writer) => typeof writer === 'string' && asciiSpelling(writer).untransliterable) ? MARKS.notAscii : 0) |
    (metadata.recognition === undefined || metadata.recognition === null ? 0 : MARKS.recognised);
  return { recordingKey: recordingKey(names), spellingKey: spellingKey(names), marks };
}
