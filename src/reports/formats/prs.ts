import { compactDate, fileSafe, type ReportFormat, type ReportInput, type ReportRun } from '../format';
import { clockOfSeconds, localParts, pad2 } from '../local-time';
import type { ReportPlay } from '../rows';
import { normalizedIsrc, recordingKey } from '../../domain/recording';
import { airedSeconds } from '../selection';
import { joinNames, tabField } from '../text-fields';

// PRS for Music programme return (docs/reports-uk.md "PRS for Music"): tab-delimited, a header
// row, one row per recording and hour of the day it aired in (local time), with its plays.
// Memory grows with recordings x hours, never with the plays.

const HEADER = ['Title', 'Writers', 'Performer', 'Duration', 'Time Band', 'Plays', 'Album', 'ISRC'];

interface Row {
  play: ReportPlay;
  hour: number;
  seconds: number;
  plays: number;
}

/** The time-of-day band of an hour: `14:00-14:59`. */
export const hourBand = (hour: number): string => `${pad2(hour)}:00-${pad2(hour)}:59`;

function line(row: Row): string {
  const { play } = row;
  const fields = [
    tabField(play.title),
    tabField(joinNames(play.composers)),
    tabField(play.artist),
    clockOfSeconds(row.seconds),
    hourBand(row.hour),
    String(row.plays),
    tabField(play.album),
    normalizedIsrc(play.isrc) ?? '',
  ];
  return `${fields.join('\t')}\n`;
}

async function* render(input: ReportInput, run: ReportRun): AsyncGenerator<string> {
  yield `${HEADER.join('\t')}\n`;
  const rows = new Map<string, Row>();
  for await (const batch of input.plays()) {
    for (const play of batch) {
      const hour = localParts(Date.parse(play.started_at), run.settings.timeZone).hour;
      const key = `${hour}\u0000${recordingKey(play)}`;
      const row = rows.get(key);
      if (row) row.plays++;
      // Duration of use: the recording's own length when known, else what aired of it.
      else rows.set(key, { play, hour, seconds: play.duration ?? airedSeconds(play) ?? 0, plays: 1 });
    }
  }
  const ordered = [...rows.values()].sort((a, b) => a.hour - b.hour);
  for (let i = 0; i < ordered.length; i += 256)
    yield ordered
      .slice(i, i + 256)
      .map(line)
      .join('');
}

export const prs: ReportFormat = {
  name: 'prs',
  contentType: () => 'text/tab-separated-values; charset=utf-8',
  needsPerformances: () => false,
  gathersBeforeWriting: () => true,
  fileName(run) {
    return fileSafe(`${run.settings.service}-prs-${compactDate(run.range.from)}-${compactDate(run.range.to)}.txt`);
  },
  render,
};
