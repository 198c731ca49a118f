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

/** One recording: its ISRC, else artist + title + album (docs/decisions.md "Reports"). */
export function recordingKey(play: ReportPlay): string {
  const isrc = normalizedIsrc(play.isrc);
  if (isrc !== undefined && ISRC_SHAPE.test(isrc)) return `isrc:${isrc}`;
  return `names:${JSON.stringify([play.artist ?? '', play.title ?? '', play.album ?? ''])}`;
}

export const ISRC_SHAPE = /^[A-Z]{2}[A-Z0-9]{3}[0-9]{7}$/;

/** An ISRC as the societies want it: no hyphens or spaces (`GB-AAA-12-00001` is written `GBAAA1200001`). */
export function normalizedIsrc(isrc: string | undefined): string | undefined {
  if (isrc === undefined) return undefined;
  if (ISRC_SHAPE.test(isrc)) return isrc;
  const bare = isrc.replace(/[-\s]/g, '').toUpperCase();
  return bare === '' ? undefined : bare;
}
