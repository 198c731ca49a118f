import { isIP } from 'node:net';
import { fieldText, fieldTexts } from '../domain/track';
import type { ListenerSession as StoredSession, PlayLogStore, PlayRow } from '../store/plays';
import type { ReportQuery, ReportSource } from './run-report';
import type { Batches } from './format';
import type { ListenerSession, ReportPlay } from './rows';

// The play log of the store as a report source (docs/reports.md "Where the rows come from"): each
// stored play and session flattened into a report row, a page of the store at a time.

const iso = (ms: number): string => new Date(ms).toISOString();

/** One stored play as a report row: air fields from the log, names and rights from the record's metadata. */
export function reportPlayOf(row: PlayRow): ReportPlay {
  const { metadata, play } = row;
  const writers = fieldTexts(metadata, 'writers');
  const composer = fieldText(metadata, 'composer');
  const duration = metadata.duration;
  return {
    dbid: row.dbid,
    started_at: play.startedAt,
    ended_at: play.endedAt,
    end_reason: play.endReason,
    kind: play.kind,
    usage: play.usage,
    channel: play.channel,
    artist: fieldText(metadata, 'artist'),
    title: fieldText(metadata, 'title'),
    album: fieldText(metadata, 'album'),
    label: fieldText(metadata, 'label'),
    isrc: fieldTexts(metadata, 'isrc')[0],
    catalogue_number: fieldText(metadata, 'catalognumber'),
    composers: writers.length > 0 ? writers : composer === undefined ? undefined : [composer],
    duration: typeof duration === 'number' && Number.isFinite(duration) ? duration : undefined,
    listeners: play.listeners,
    trimmed_seconds: play.trimmedSeconds ?? 0,
  };
}

/** A stored session as a report row; the address only when the log kept it (playlog.keepAddresses), not its hash. */
export function reportSessionOf(session: StoredSession): ListenerSession {
  const kept = isIP(session.address) !== 0;
  return {
    id: session.id,
    channel: session.channel,
    address: kept ? session.address : undefined,
    address_hash: session.address,
    user_agent: session.userAgent === '' ? undefined : session.userAgent,
    connected_at: session.connectedAt,
    disconnected_at: session.disconnectedAt,
  };
}

/** The store's pages as report batches. */
async function* batches<T, R>(pages: AsyncIterable<readonly T[]>, map: (row: T) => R): Batches<R> {
  for await (const page of pages) yield page.map(map);
}

export function storeReportSource(plays: PlayLogStore): ReportSource {
  const range = (query: ReportQuery) => ({ from: iso(query.startMs), to: iso(query.endMs), channel: query.channel });
  return {
    plays: (query) => batches(plays.playPages(range(query)), reportPlayOf),
    sessions: (query) => batches(plays.sessionPages(range(query)), reportSessionOf),
    async hasSessions(query) {
      // The first page answers; leaving the loop closes the store's reader.
      for await (const page of plays.sessionPages(range(query))) return page.length > 0;
      return false;
    },
  };
}
