import type { PlayKind, PlayUsage } from './play';

// Corrections of a stored record (docs/http-api.md "`PATCH /v1/history/<dbid>`: correct a record"):
// what a correction may change of the play, and the audit entry every correction leaves. Pure.

/** The play's fields a correction may set: its air times, its kind and its usage. */
export interface PlayCorrection {
  startedAt?: string;
  endedAt?: string;
  kind?: PlayKind;
  usage?: PlayUsage;
}

/** A field's value before and after one correction (absent: `null`). */
export interface FieldChange {
  before: unknown;
  after: unknown;
}

/** One correction as the audit trail keeps it: never changed, never removed with a later one. */
export interface CorrectionEntry {
  /** ISO 8601 UTC with milliseconds. */
  at: string;
  /** Who asked: the client's address as the server saw it, `cli <address>` for svc's own client. */
  by: string;
  /** Field name (as /v1/history shows it) -> before and after. */
  changes: Record<string, FieldChange>;
}

/** How a stored play's air fields are named on every surface, for the audit entry. */
export const PLAY_CORRECTION_FIELDS = { startedAt: 'started_at', endedAt: 'ended_at', kind: 'kind', usage: 'usage' } as const;

/** Pure: the metadata fields a correction changes, each with its value before and after. */
export function metadataChanges(before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): Record<string, FieldChange> {
  const changes: Record<string, FieldChange> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = before[key] ?? null;
    const now = after[key] ?? null;
    if (JSON.stringify(was) !== JSON.stringify(now)) changes[key] = { before: was, after: now };
  }
  return changes;
}

/** The play as it stands, as far as a correction reads it. */
export interface CorrectablePlay {
  startedAt: string;
  endedAt: string | null;
  kind: PlayKind;
  usage: PlayUsage;
}

/** Pure: the play after the correction, and the changes it makes; an end not after the start is refused (a message). */
export function correctedPlay(
  play: CorrectablePlay,
  correction: PlayCorrection,
): { play: CorrectablePlay; changes: Record<string, FieldChange> } | { refused: string } {
  const next: CorrectablePlay = { ...play, ...correction };
  if (next.endedAt !== null && !(next.endedAt > next.startedAt)) {
    return { refused: `ended_at ${next.endedAt} must be after started_at ${next.startedAt}` };
  }
  const changes: Record<string, FieldChange> = {};
  for (const [key, name] of Object.entries(PLAY_CORRECTION_FIELDS) as [keyof CorrectablePlay, string][]) {
    if (next[key] !== play[key]) changes[name] = { before: play[key], after: next[key] };
  }
  return { play: next, changes };
}

/** A play of a report's range with its corrections (the check names them as notes, docs/reports.md "Checks"). */
export interface CorrectedPlay {
  dbid: number;
  corrections: CorrectionEntry[];
}

/** Pure: a correction's changes as one line, `field before -> after; ...` (absent: `none`). */
export function changesLine(changes: Readonly<Record<string, FieldChange>>): string {
  const text = (value: unknown): string => (value === null || value === undefined ? 'none' : typeof value === 'string' ? value : JSON.stringify(value));
  return Object.entries(changes)
    .map(([field, change]) => `${field} ${text(change.before)} -> ${text(change.after)}`)
    .join('; ');
}

/** The outcome of a correction in the store. */
export type CorrectionOutcome<R> =
  | { kind: 'corrected'; record: R; entry: CorrectionEntry | null }
  | { kind: 'not found' }
  | { kind: 'refused'; message: string }
  | { kind: 'overlaps'; dbid: number };
