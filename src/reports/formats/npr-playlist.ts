import { compactDate, fileSafe, type ReportFormat, type ReportInput, type ReportRun } from '../format';
import type { Batches } from '../format';
import type { ReportPlay } from '../rows';
import { tabField } from '../text-fields';
import { fileClock, nprLocalTime, type FileClock } from './local-stamp';

// NPR Digital Services playlist log (docs/reports-us.md "NPR/DS playlist log"): one file per
// stream, tab-delimited, a header row, one row per play with start and end to the second in local
// time. Plays never overlap: a play still running when the next starts ends there, as Spinitron
// trims, and the `Trimmed` column (present when any play was cut) shows the seconds cut.

const HEADER = ['Start Time', 'End Time', 'Title', 'Artist', 'Album', 'Label'];

interface Held {
  play: ReportPlay;
  startMs: number;
  endMs: number;
  trimmedSeconds: number;
}

/** The channel the file is about: the one asked for, else the only one the plays have. */
export function playlistChannel(run: ReportRun, channels: readonly string[]): string {
  return run.channel ?? channels[0] ?? 'main';
}

function line(held: Held, clock: FileClock, withTrimmed: boolean): string {
  const { play } = held;
  const fields = [
    nprLocalTime(held.startMs, clock),
    nprLocalTime(held.endMs, clock),
    tabField(play.title),
    tabField(play.artist),
    tabField(play.album),
    tabField(play.label),
  ];
  if (withTrimmed) fields.push(String(Math.round(held.trimmedSeconds)));
  return `${fields.join('\t')}\n`;
}

/** Plays of one channel with each end cut at the next start; holds one play back to know it. */
export async function* trimmedPlays(plays: Batches<ReportPlay>, channel: string): Batches<Held> {
  let held: Held | undefined;
  for await (const batch of plays) {
    const ready: Held[] = [];
    for (const play of batch) {
      if (play.channel !== channel || play.ended_at === null) continue;
      const startMs = Date.parse(play.started_at);
      const current: Held = { play, startMs, endMs: Math.max(startMs, Date.parse(play.ended_at)), trimmedSeconds: play.trimmed_seconds };
      if (held && held.endMs > startMs) {
        held.trimmedSeconds += (held.endMs - Math.max(startMs, held.startMs)) / 1000;
        held.endMs = Math.max(startMs, held.startMs);
      }
      if (held) ready.push(held);
      held = current;
    }
    if (ready.length > 0) yield ready;
  }
  if (held) yield [held];
}

async function* render(input: ReportInput, run: ReportRun, facts: { channels: string[]; anyTrimmed: boolean }): AsyncGenerator<string> {
  const withTrimmed = facts.anyTrimmed;
  yield `${[...HEADER, ...(withTrimmed ? ['Trimmed'] : [])].join('\t')}\n`;
  const channel = playlistChannel(run, facts.channels);
  const clock = fileClock(run.range, run.settings.timeZone);
  for await (const ready of trimmedPlays(input.plays(), channel)) yield ready.map((held) => line(held, clock, withTrimmed)).join('');
}

export const nprPlaylist: ReportFormat = {
  name: 'npr-playlist',
  contentType: () => 'text/tab-separated-values; charset=utf-8',
  needsPerformances: () => false,
  gathersBeforeWriting: () => false,
  asciiNames: [],
  fileName(run, facts) {
    return fileSafe(`${run.settings.service}-${playlistChannel(run, facts.channels)}-playlist-${compactDate(run.range.from)}-${compactDate(run.range.to)}.txt`);
  },
  render,
};
