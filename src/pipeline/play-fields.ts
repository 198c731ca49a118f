import { DEFAULT_CHANNEL, PLAY_KINDS, PLAY_USAGES, type NewPlay, type PlayKind } from '../domain/play';
import { DEFAULT_PLAY_POLICY, type KindRule, type PlayPolicy } from '../playlog/play-policy';
import { fieldText, type TrackFields } from '../domain/track';

// The play a submission asks for (docs/play-log.md): its start, channel, kind, usage and people,
// taken out of the metadata; what a submission cannot set (its end, its listeners) is dropped.
// Pure: the store places the play after the channel's latest one.

const MAX_PLANNED_SECONDS = 86_400;

/** Taken out of the metadata into the play's own columns. */
const PLAY_FIELDS = ['started_at', 'channel', 'kind', 'usage', 'dj', 'show'] as const;
/** The log's own: a submission never sets them. */
const LOG_FIELDS = ['ended_at', 'end_reason', 'listeners', 'trimmed_seconds'] as const;
/** Every field that is the play's, not the record's: a correction of the record leaves them alone (pipeline/edit-track.ts). */
export const AIR_FIELDS: ReadonlySet<string> = new Set([...PLAY_FIELDS, ...LOG_FIELDS]);

export interface TakenPlay {
  metadata: TrackFields;
  play: NewPlay;
  warnings: string[];
}

export function takePlay(fields: Readonly<TrackFields>, receivedAt: string, policy: PlayPolicy = DEFAULT_PLAY_POLICY): TakenPlay {
  const warnings: string[] = [];
  const metadata: TrackFields = { ...fields };
  for (const key of [...PLAY_FIELDS, ...LOG_FIELDS]) delete metadata[key];

  const startedAt = believedStart(fieldText(fields, 'started_at'), receivedAt, policy, warnings);
  const play: NewPlay = {
    startedAt,
    channel: fieldText(fields, 'channel') ?? DEFAULT_CHANNEL,
    kind: chooseKind(fields, policy, warnings),
    usage: oneOf(PLAY_USAGES, fields, 'usage', 'feature', warnings),
  };
  const dj = fieldText(fields, 'dj');
  const show = fieldText(fields, 'show');
  if (dj !== undefined) play.dj = dj;
  if (show !== undefined) play.show = show;
  const duration = fields.duration;
  // A day at most: a longer "duration" is no track length, and the play ends with the next one.
  if (typeof duration === 'number' && Number.isFinite(duration) && duration > 0 && duration <= MAX_PLANNED_SECONDS) {
    play.plannedEndAt = new Date(Date.parse(startedAt) + duration * 1000).toISOString();
  }
  return { metadata, play, warnings };
}

/** A submitted start is believed within the window around the arrival; otherwise the arrival stands, with a warning. */
function believedStart(submitted: string | undefined, receivedAt: string, policy: PlayPolicy, warnings: string[]): string {
  if (submitted === undefined) return receivedAt;
  const at = Date.parse(submitted);
  const arrival = Date.parse(receivedAt);
  // Date.parse reads many spellings; only a full date-time with a zone is a start (a bare date is midnight).
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(submitted) || Number.isNaN(at)) {
    warnings.push(`started_at "${submitted}" is not an ISO 8601 date-time with a time zone; the arrival time is used`);
    return receivedAt;
  }
  if (at < arrival - policy.startedAtPastSeconds * 1000 || at > arrival + policy.startedAtFutureSeconds * 1000) {
    warnings.push(
      `started_at ${submitted} is more than ${policy.startedAtPastSeconds} s before or ${policy.startedAtFutureSeconds} s after the arrival; the arrival time is used`,
    );
    return receivedAt;
  }
  return new Date(at).toISOString();
}

/** The submitted kind, else the first config rule that matches, else the short-item rule, else music. */
function chooseKind(fields: Readonly<TrackFields>, policy: PlayPolicy, warnings: string[]): PlayKind {
  if (fieldText(fields, 'kind') !== undefined) return oneOf(PLAY_KINDS, fields, 'kind', 'music', warnings);
  const rule = policy.kindRules.find((candidate) => matchesRule(fields, candidate));
  if (rule) return rule.kind;
  const duration = fields.duration;
  if (policy.shortItemSeconds > 0 && typeof duration === 'number' && duration > 0 && duration < policy.shortItemSeconds) return policy.shortItemKind;
  return 'music';
}

function matchesRule(fields: Readonly<TrackFields>, rule: KindRule): boolean {
  return Object.entries(rule.match).every(([field, pattern]) => {
    const value = fieldText(fields, field);
    return value !== undefined && new RegExp(pattern, 'iu').test(value);
  });
}

function oneOf<T extends string>(allowed: readonly T[], fields: Readonly<TrackFields>, key: string, fallback: T, warnings: string[]): T {
  const value = fieldText(fields, key)?.toLowerCase();
  if (value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  warnings.push(`${key} "${value}" is not one of ${allowed.join(', ')}; ${fallback} is used`);
  return fallback;
}
