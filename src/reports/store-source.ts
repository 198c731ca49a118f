import { isIP } from 'node:net';
import { recordingNamesOf, writersOf } from '../domain/recording';
import { fieldText } from '../domain/track';
import type { PlayReportQueries, ReportTotals } from '../store/play-reports';
import type { ReportReads, ReportSnapshot, ReportSnapshots } from '../store/report-snapshot';
import type { ListenerSession as StoredSession, PlayLogStore, PlayRange, PlayRow } from '../store/plays';
import type { OpenReportSource, ReportQuery, ReportSource } from './run-report';
import type { Batches, RecordingLine } from './format';
import type { ListenerSession, ReportPlay } from './rows';

// The play log of the store as a report source (docs/reports.md "Where the rows come from"): each
// stored play and session flattened into a report row, a page of the store at a time.

const iso = (ms: number): string => new Date(ms).toISOString();

/** One stored play as a report row: air fields from the log, names and rights from the record's metadata. */
export function reportPlayOf(row: PlayRow): ReportPlay {
  const { metadata, play } = row;
  const names = recordingNamesOf(metadata);
  const duration = metadata.duration;
  return {
    dbid: row.dbid,
    started_at: play.startedAt,
    ended_at: play.endedAt,
    end_reason: play.endReason,
    kind: play.kind,
    usage: play.usage,
    channel: play.channel,
    artist: names.artist,
    title: names.title,
    album: names.album,
    label: names.label,
    isrc: names.isrc,
    catalogue_number: fieldText(metadata, 'catalognumber'),
    iswc: fieldText(metadata, 'iswc'),
    composers: writersOf(metadata),
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

/** Where a source's reads go: the store itself, or a snapshot of it that a refresh may replace. */
interface ReadsOf {
  reads(): ReportReads;
  /** Computes the range's missing or outdated report columns; reads() sees them once it settles. */
  refresh(range: PlayRange): Promise<void>;
}

function sourceOver(log: ReadsOf): ReportSource {
  const range = (query: ReportQuery) => ({ from: iso(query.startMs), to: iso(query.endMs), channel: query.channel });
  const reportRange = (query: ReportQuery, minSeconds: number) => ({ ...range(query), minAiredMs: Math.max(0, minSeconds * 1000) });
  /** The last summary's totals, for the census lines of the same range (StoredReportQueries.recordings is asked after summary). */
  let scanned: { key: string; totals: ReportTotals } | undefined;
  const keyOf = (query: ReportQuery, minSeconds: number) => JSON.stringify([query.startMs, query.endMs, query.channel ?? null, minSeconds]);
  return {
    stored: {
      async summary(query, minSeconds) {
        let totals = await log.reads().reportTotals(reportRange(query, minSeconds));
        if (totals.summary.some((row) => row.stale > 0)) {
          await log.refresh(range(query));
          totals = await log.reads().reportTotals(reportRange(query, minSeconds));
        }
        scanned = { key: keyOf(query, minSeconds), totals };
        return totals.summary;
      },
      candidates: (query, minSeconds, filter) =>
        batches(log.reads().checkCandidates(reportRange(query, minSeconds), filter), ({ row, previous }) => ({
          play: reportPlayOf(row),
          previous: previous ?? undefined,
        })),
      async recordings(query, minSeconds, byChannel) {
        const kept = scanned?.key === keyOf(query, minSeconds) ? scanned.totals : await log.reads().reportTotals(reportRange(query, minSeconds));
        const lines: RecordingLine[] = [];
        for await (const page of kept.recordings(byChannel)) {
          for (const total of page) {
            if (total.uncounted > 0) return undefined;
            const { names, channel, performances, listenerSeconds, plays } = total;
            // Every field written out: a line built by spreading names it may lack gets a shape of its own (docs/reports.md "Memory and speed").
            const { artist, title, isrc, album, label } = names;
            lines.push({ artist, title, isrc, album, label, channel: channel ?? '', performances, listenerSeconds, plays });
          }
        }
        return lines;
      },
    },
    plays: (query) => batches(log.reads().playPages(range(query)), reportPlayOf),
    corrections: (query) => log.reads().correctedPlays(range(query)),
    recognised: (query) => log.reads().recognisedPlays(range(query)),
    sessions: (query) => batches(log.reads().sessionPages(range(query)), reportSessionOf),
    async hasSessions(query) {
      // The first page answers; leaving the loop closes the store's reader.
      for await (const page of log.reads().sessionPages(range(query))) return page.length > 0;
      return false;
    },
  };
}

/** The store's play log as a report source, each read seeing the log as it is then. */
export function storeReportSource(plays: PlayLogStore & PlayReportQueries): ReportSource {
  return sourceOver({
    reads: () => plays,
    async refresh(range) {
      await plays.refreshReportColumns(range);
    },
  });
}

/**
 * Each report on a snapshot of the store's play log (docs/reports.md "One snapshot"). A snapshot
 * cannot write: when its first summary finds plays whose report columns are missing or outdated
 * (rows from before migration 14, or from an older svc on the same database), the store computes
 * them and the report takes a new snapshot before it has read anything else.
 */
export function snapshotReportSource(plays: PlayLogStore & PlayReportQueries & ReportSnapshots): OpenReportSource {
  return async () => {
    let snapshot: ReportSnapshot = await plays.reportSnapshot();
    const source = sourceOver({
      reads: () => snapshot.reads,
      async refresh(range) {
        await plays.refreshReportColumns(range);
        const outdated = snapshot;
        snapshot = await plays.reportSnapshot();
        await outdated.release();
      },
    });
    return { source, release: () => snapshot.release() };
  };
}
