// The play log's fields on every record surface (docs/play-log.md "Where it shows"). Tests about
// other things compare the rest of a record with this helper and check the play fields on their own.

const PLAY_FIELDS = ['started_at', 'ended_at', 'end_reason', 'kind', 'usage', 'channel', 'dj', 'show', 'trimmed_seconds', 'listeners'];

/** The record without its play-log fields. */
export function withoutPlayFields(record: unknown): Record<string, unknown> {
  const copy = { ...(record as Record<string, unknown>) };
  for (const field of PLAY_FIELDS) delete copy[field];
  return copy;
}
