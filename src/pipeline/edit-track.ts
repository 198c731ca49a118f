import type { NowPlaying } from '../domain/current-track';
import type { TrackFields, TrackRecord } from '../domain/track';
import { AppError } from '../errors';
import type { TrackStore } from '../store/tracks';
import { authenticate } from './authenticate';
import { fitRecord } from './fit-record';
import { parseSubmission, shortName, type RawRequest } from './parse';
import { AIR_FIELDS } from './play-fields';
import { isRemovedField, sanitize, type SanitizeOptions } from './sanitize';
import { requireIdentifyingField } from './validate';

// PATCH /v1/history/<dbid> (docs/http-api.md "`PATCH /v1/history/<dbid>`: correct a record";
// docs/reports.md "Fixing what the check lists"): authenticate -> sanitize the given fields as a
// submission's -> merge them into the stored record (null removes a field) -> validate -> store ->
// if it is the current track, announce it. The play itself (air times, kind, listener counts) is
// the log's and does not change.

export interface EditDeps extends SanitizeOptions {
  secret: string;
  /** limits.maxFields: more fields in one change is a 400, as for a submission. */
  maxFields: number;
  tracks: TrackStore;
  nowPlaying: NowPlaying;
}

export interface EditResult {
  record: TrackRecord;
  warnings: string[];
}

/** The change a body asks for: fields to set (sanitized) and fields to remove. */
interface Change {
  set: TrackFields;
  remove: string[];
  warnings: string[];
}

export async function editTrack(request: RawRequest, dbid: number, deps: EditDeps): Promise<EditResult> {
  // The secret before the record is looked up, as for DELETE: a caller without it learns nothing about what exists.
  const { fields, credential } = parseSubmission(request, deps);
  authenticate(credential, deps.secret);
  const change = changeOf(fields, deps);
  const stored = await deps.tracks.byDbid(dbid);
  if (!stored) throw new AppError('NOT_FOUND', `No record with dbid ${dbid}`);
  const warnings = [...change.warnings];
  const merged: TrackFields = { ...stored.metadata, ...change.set };
  for (const key of change.remove) delete merged[key];
  requireIdentifyingField(merged);
  const metadata = fitRecord(merged, deps.maxRecordBytes, warnings);
  const record: TrackRecord = { ...stored, metadata };
  await deps.tracks.updateMetadata(dbid, metadata);
  // Ignored unless it is the current track: an older record changes in the history only.
  deps.nowPlaying.update(record);
  return { record, warnings };
}

/** Pure: the fields of a PATCH body as a change; refused (400) when one is the play log's. */
export function changeOf(body: Readonly<Record<string, unknown>>, options: SanitizeOptions): Change {
  const entries = Object.entries(body).filter(([key]) => !isRemovedField(key));
  const airField = entries.find(([key]) => AIR_FIELDS.has(key));
  if (airField)
    throw new AppError(
      'INVALID_PARAMETERS',
      `Field '${shortName(airField[0])}' belongs to the play log and is not changed here (only the record's own fields are)`,
    );
  // null removes a field; so does a blank value, which sanitize would drop.
  const removed = ([, value]: [string, unknown]) => value === null || (typeof value === 'string' && value.trim() === '');
  const remove = entries.filter(removed).map(([key]) => key);
  const sanitized = sanitize(Object.fromEntries(entries.filter((entry) => !removed(entry))), options);
  const warnings = [...sanitized.warnings];
  if (Object.hasOwn(body, 'coverurl')) warnings.push("Field 'coverurl' ignored: images are not changed here");
  return { set: sanitized.fields, remove, warnings };
}
