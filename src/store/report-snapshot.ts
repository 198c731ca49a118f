import type { PlayLogStore } from './plays';
import type { PlayReportQueries } from './play-reports';

// The report snapshot contract (docs/reports.md "One snapshot"); each backend's report-snapshot.ts
// opens one on a connection of its own.

/** What a report reads of the play log: its queries and the pages of plays and sessions. */
export type ReportReads = Pick<PlayLogStore, 'playPages' | 'sessionPages'> & Omit<PlayReportQueries, 'refreshReportColumns'>;

/** A snapshot's reads from a backend's report queries on its connection (never refreshReportColumns: a snapshot cannot write). */
export function reportReadsOf(queries: PlayReportQueries, pages: Pick<PlayLogStore, 'playPages' | 'sessionPages'>): ReportReads {
  return {
    playSummary: (range) => queries.playSummary(range),
    checkCandidates: (range, filter) => queries.checkCandidates(range, filter),
    recordingTotals: (range, byChannel) => queries.recordingTotals(range, byChannel),
    reportTotals: (range) => queries.reportTotals(range),
    correctedPlays: (range) => queries.correctedPlays(range),
    recognisedPlays: (range) => queries.recognisedPlays(range),
    playPages: (range) => pages.playPages(range),
    sessionPages: (range) => pages.sessionPages(range),
  };
}

/**
 * The play log as it was at one instant, for one report (docs/reports.md "One snapshot"): a
 * play written, ended or corrected while the report runs is not in any of its passes, so the
 * check and the file always count the same plays. release() ends it; holding one keeps no lock.
 */
export interface ReportSnapshot {
  reads: ReportReads;
  release(): Promise<void>;
}

/** Where reports take their snapshots: both backends' play logs. */
export interface ReportSnapshots {
  reportSnapshot(): Promise<ReportSnapshot>;
}
