import type { Batches } from './format';
import type { ReportSource, StoredReportQueries } from './run-report';

// A report in slices (docs/reports.md "Memory and speed"): the store's pages come from
// better-sqlite3 synchronously, and an await of a settled promise lets no I/O in, so a report
// would hold the event loop from its first page to its last. A source made here hands the loop
// back after every page, so /v1/last, streams and Icecast callbacks are answered between pages.

/** Hands the event loop over once (whatever waits on I/O runs first). */
export type Pause = () => Promise<void>;

/** The default pause: one turn of the event loop. */
export const nextTurn: Pause = () => new Promise((resolve) => setImmediate(resolve));

async function* paused<T>(batches: Batches<T>, pause: Pause): Batches<T> {
  for await (const batch of batches) {
    yield batch;
    await pause();
  }
}

/** The same rows, the loop handed back after each page of plays, sessions and candidates. */
export function slicedSource(source: ReportSource, pause: Pause = nextTurn): ReportSource {
  const { stored } = source;
  const slicedStored: StoredReportQueries | undefined =
    stored === undefined
      ? undefined
      : {
          summary: async (query, minSeconds) => {
            await pause();
            return stored.summary(query, minSeconds);
          },
          candidates: (query, minSeconds, filter) => paused(stored.candidates(query, minSeconds, filter), pause),
          recordings: async (query, minSeconds, byChannel) => {
            await pause();
            return stored.recordings(query, minSeconds, byChannel);
          },
        };
  return {
    plays: (query) => paused(source.plays(query), pause),
    sessions: (query) => paused(source.sessions(query), pause),
    hasSessions: (query) => source.hasSessions(query),
    stored: slicedStored,
    ...(source.corrections ? { corrections: source.corrections } : {}),
    ...(source.recognised ? { recognised: source.recognised } : {}),
  };
}
