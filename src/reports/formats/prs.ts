import { compactDate, fileSafe, type ReportFormat, type ReportInput, type ReportRun } from '../format';
import { clockOfSeconds, pad2, pad4 } from '../local-time';
import type { ReportPlay } from '../rows';
import { normalizedIsrc } from '../../domain/recording';
import { airedSeconds } from '../selection';
import { joinNames, tabField } from '../text-fields';
import { fileClock, type FileClock } from './local-stamp';

// PRS for Music programme return (docs/reports-uk.md "PRS for Music"): tab-delimited, a header
// row, one row per music play: its transmission date and time (local), what aired of it, the
// work's writers and ISWC, the performer, album and ISRC. Streams as it reads.

const HEADER = ['Date', 'Time', 'Title', 'Writers', 'Performer', 'Duration', 'ISWC', 'Album', 'ISRC'];

/** An ISWC as PRS writes it, `T-034.524.680-1`, from any spelling with or without separators; else empty. */
export function writtenIswc(iswc: string | undefined): string {
  const bare = (iswc ?? '').replace(/[\s.-]/g, '').toUpperCase();
  if (!/^T\d{10}$/.test(bare)) return '';
  return `T-${bare.slice(1, 4)}.${bare.slice(4, 7)}.${bare.slice(7, 10)}-${bare.slice(10)}`;
}

function line(play: ReportPlay, clock: FileClock): string {
  const p = clock(Date.parse(play.started_at));
  const fields = [
    `${pad4(p.year)}-${pad2(p.month)}-${pad2(p.day)}`,
    `${pad2(p.hour)}:${pad2(p.minute)}:${pad2(p.second)}`,
    tabField(play.title),
    tabField(joinNames(play.composers)),
    tabField(play.artist),
    // The duration of use: what aired of it, not the recording's length.
    clockOfSeconds(airedSeconds(play) ?? 0),
    writtenIswc(play.iswc),
    tabField(play.album),
    normalizedIsrc(play.isrc) ?? '',
  ];
  return `${fields.join('\t')}\n`;
}

async function* render(input: ReportInput, run: ReportRun): AsyncGenerator<string> {
  yield `${HEADER.join('\t')}\n`;
  const clock = fileClock(run.range, run.settings.timeZone);
  for await (const batch of input.plays()) yield batch.map((play) => line(play, clock)).join('');
}

export const prs: ReportFormat = {
  name: 'prs',
  contentType: () => 'text/tab-separated-values; charset=utf-8',
  needsPerformances: () => false,
  gathersBeforeWriting: () => false,
  asciiNames: [],
  fileName(run) {
    const channel = run.channel === undefined ? '' : `-${run.channel}`;
    return fileSafe(`${run.settings.service}${channel}-prs-${compactDate(run.range.from)}-${compactDate(run.range.to)}.txt`);
  },
  render,
};
