import type { PlayCorrection } from '../domain/correction';
import type { NowPlaying } from '../domain/current-track';
import { parseIsoDateTime } from '../domain/iso-time';
import { PLAY_KINDS, PLAY_USAGES } from '../domain/play';
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
// submission's -> merge them into the stored record (null removes a field) -> validate -> store
// with its audit entry -> count the play's listeners again if its air times changed -> if it is the
// current track, announce it. Of the play, its air times, kind and usage may be corrected (plays
// of a channel still never overlap); its channel, people, end reason and listeners may not.

export interface EditDeps extends SanitizeOptions {
  secret: string;
  /** limits.maxFields: more fields in one change is a 400, as for a submission. */
  maxFields: number;
  tracks: TrackStore;
  nowPlaying: NowPlaying;
  /** Counts the listeners of every ended play not counted yet, from the stored sessions (playlog/play-log.ts). */
  countListeners: () => Promise<void>;
  /** Who asks, for the audit trail: the client's address, `cli <address>` for svc's own client. */
  by: string;
  now?: () => number;
}

export interface EditResult {
  record: TrackRecord;
  warnings: string[];
}

/** The change a body asks for: fields to set (sanitized), fields to remove, and the play's fields to correct. */
interface Change {
  set: TrackFields;
  remove: string[];
  play: PlayCorrection;
  warnings: string[];
}

/** The play's fields a correction may set (docs/http-api.md "`PATCH /v1/history/<dbid>`: correct a record"). */
const CORRECTABLE_PLAY_FIELDS: ReadonlySet<string> = new Set(['started_at', 'ended_at', 'kind', 'usage']);

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
  const at = new Date((deps.now ?? Date.now)()).toISOString();
  const outcome = await deps.tracks.correct(dbid, { metadata, play: change.play, at, by: deps.by });
  switch (outcome.kind) {
    case 'not found':
      throw new AppError('NOT_FOUND', `No record with dbid ${dbid}`);
    case 'refused':
      throw new AppError('INVALID_PARAMETERS', `Invalid correction: ${outcome.message}`);
    case 'overlaps':
      throw new AppError('PLAY_OVERLAP', `The corrected play would overlap play ${outcome.dbid} on channel ${JSON.stringify(stored.play?.channel ?? '')}`);
  }
  let record = outcome.record;
  const timesChanged = outcome.entry !== null && ('started_at' in outcome.entry.changes || 'ended_at' in outcome.entry.changes);
  if (timesChanged && record.play?.endedAt != null) {
    // The listener count follows the new air times: counted again from the stored sessions before the answer.
    await deps.countListeners();
    record = (await deps.tracks.byDbid(dbid)) ?? record;
  }
  // Ignored unless it is the current track: an older record changes in the history only.
  deps.nowPlaying.update(record);
  return { record, warnings };
}

/** Pure: the fields of a PATCH body as a change; refused (400) when one is the play log's own or a play field's value is invalid. */
export function changeOf(body: Readonly<Record<string, unknown>>, options: SanitizeOptions): Change {
  const all = Object.entries(body).filter(([key]) => !isRemovedField(key));
  const play = playCorrectionOf(all.filter(([key]) => CORRECTABLE_PLAY_FIELDS.has(key)));
  const entries = all.filter(([key]) => !CORRECTABLE_PLAY_FIELDS.has(key));
  const airField = entries.find(([key]) => AIR_FIELDS.has(key));
  if (airField)
    throw new AppError(
      'INVALID_PARAMETERS',
      `Field '${shortName(airField[0])}' belongs to the play log and is not changed here (of the play, only started_at, ended_at, kind and usage are)`,
    );
  // null removes a field; so does a blank value, which sanitize would drop.
  const removed = ([, value]: [string, unknown]) => value === null || (typeof value === 'string' && value.trim() === '');
  const remove = entries.filter(removed).map(([key]) => key);
  const sanitized = sanitize(Object.fromEntries(entries.filter((entry) => !removed(entry))), options);
  const warnings = [...sanitized.warnings];
  if (Object.hasOwn(body, 'coverurl')) warnings.push("Field 'coverurl' ignored: images are not changed here");
  return { set: sanitized.fields, remove, play, warnings };
}

/** Pure: `started_at`, `ended_at`, `kind` and `usage` of a PATCH body, each checked; none can be removed. */
function playCorrectionOf(entries: readonly [string, unknown][]): PlayCorrection {
  const play: PlayCorrection = {};
  for (const [key, value] of entries) {
    const text = typeof value === 'string' ? value.trim() : '';
    if (key === 'started_at' || key === 'ended_at') {
      // An offset is required: a correction names one moment, whatever the server's zone.
      const at = /(?:Z|[+-]\d{2}:\d{2})$/i.test(text) && text.includes('T') ? parseIsoDateTime(text, 'utc') : undefined;
      if (at === undefined)
        throw new AppError('INVALID_PARAMETERS', `Invalid '${key}': expected an ISO 8601 date-time with an offset, such as 2026-10-05T20:05:20Z`);
      if (key === 'started_at') play.startedAt = at;
      else play.endedAt = at;
    } else if (key === 'kind') {
      const kind = PLAY_KINDS.find((known) => known === text);
      if (kind === undefined) throw new AppError('INVALID_PARAMETERS', `Invalid 'kind': expected one of ${PLAY_KINDS.join(', ')}`);
      play.kind = kind;
    } else {
      const usage = PLAY_USAGES.find((known) => known === text);
      if (usage === undefined) throw new AppError('INVALID_PARAMETERS', `Invalid 'usage': expected one of ${PLAY_USAGES.join(', ')}`);
      play.usage = usage;
    }
  }
  return play;
}
