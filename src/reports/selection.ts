import type { ReportPlay } from './rows';

// Which plays a report counts (docs/reports.md "Only music"): music that aired at least
// reports.minSeconds. Pure.

export type Exclusion = 'kind' | 'short' | undefined;

/** Seconds a play was on air; undefined while it has no end. */
export function airedSeconds(play: Pick<ReportPlay, 'started_at' | 'ended_at'>): number | undefined {
  if (play.ended_at === null) return undefined;
  return (Date.parse(play.ended_at) - Date.parse(play.started_at)) / 1000;
}

/** Why a play is left out, or undefined when it is reported. */
export function exclusionOf(play: ReportPlay, minSeconds: number): Exclusion {
  if (play.kind !== 'music') return 'kind';
  // Only a minimum needs the aired length: parsing two timestamps per play is a noticeable share of a month's report.
  if (minSeconds <= 0) return undefined;
  const aired = airedSeconds(play);
  if (aired !== undefined && aired < minSeconds) return 'short';
  return undefined;
}
