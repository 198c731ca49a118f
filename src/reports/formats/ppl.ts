import { compactDate, fileSafe, type ReportFacts, type ReportFormat, type ReportInput, type ReportRun } from '../format';
import type { ListenerSession } from '../rows';
import { normalizedIsrc } from '../../domain/recording';
import { csvField, tabField } from '../text-fields';

// PPL (docs/reports-uk.md "PPL"): the webcasting return's two numbers, total listener hours and
// average tracks per hour, with PPL's "performances" (their product) and the census count (each
// play's listeners summed) side by side and named; or, with a programme date, the programme
// report rows of that day.

const PROGRAMME_COLUMNS = ['Artist', 'Title', 'Record Company', 'Catalogue Number', 'ISRC'];

/** Seconds of a session inside [startMs, endMs); an open session runs until `nowMs`. */
export function secondsInside(session: ListenerSession, startMs: number, endMs: number, nowMs: number): number {
  const from = Math.max(Date.parse(session.connected_at), startMs);
  const to = Math.min(session.disconnected_at === null ? nowMs : Date.parse(session.disconnected_at), endMs);
  return Math.max(0, to - from) / 1000;
}

export interface PplFigures {
  listenerHours: number;
  /** Music plays per hour on air (PPL's figure). */
  tracksPerHour: number;
  /** Music plays per hour of the period, on air or not, beside it. */
  tracksPerCalendarHour: number;
  onAirHours: number;
  pplPerformances: number;
  censusPerformances: number;
  musicPlays: number;
}

async function figures(input: ReportInput, run: ReportRun): Promise<PplFigures> {
  let plays = 0;
  let census = 0;
  for await (const batch of input.plays()) {
    for (const play of batch) {
      plays++;
      census += play.listeners?.atp ?? 0;
    }
  }
  let seconds = 0;
  for await (const batch of input.sessions()) {
    for (const session of batch) {
      if (run.channel === undefined || session.channel === run.channel) seconds += secondsInside(session, run.range.startMs, run.range.endMs, run.nowMs);
    }
  }
  const listenerHours = seconds / 3600;
  const onAirHours = (await onAirSeconds(input.airPlays(), run.range.startMs, run.range.endMs)) / 3600;
  const tracksPerHour = onAirHours > 0 ? plays / onAirHours : 0;
  const tracksPerCalendarHour = plays / ((run.range.endMs - run.range.startMs) / 3_600_000);
  return {
    listenerHours,
    tracksPerHour,
    tracksPerCalendarHour,
    onAirHours,
    pplPerformances: listenerHours * tracksPerHour,
    censusPerformances: census,
    musicPlays: plays,
  };
}

/** The seconds of [startMs, endMs) that some play (any kind) was on air: the union of the plays, in air order. */
export async function onAirSeconds(
  plays: AsyncIterable<readonly { started_at: string; ended_at: string | null }[]>,
  startMs: number,
  endMs: number,
): Promise<number> {
  let total = 0;
  let coveredTo = startMs;
  for await (const batch of plays)
    for (const play of batch) {
      if (play.ended_at === null) continue;
      const from = Math.max(Date.parse(play.started_at), coveredTo);
      const to = Math.min(Date.parse(play.ended_at), endMs);
      if (to > from) total += to - from;
      coveredTo = Math.max(coveredTo, to);
    }
  return total / 1000;
}

function summary(run: ReportRun, facts: ReportFacts, numbers: PplFigures): string {
  const rows: Array<[string, string]> = [
    ['Service', run.settings.service],
    ['Period', `${run.range.from} to ${run.range.to} (${run.settings.timeZone})`],
    ['Channel', run.channel ?? 'all'],
    ['Total listener hours', numbers.listenerHours.toFixed(2)],
    ['Hours on air', numbers.onAirHours.toFixed(2)],
    ['Average tracks per hour on air', numbers.tracksPerHour.toFixed(2)],
    ['Average tracks per hour of the period', numbers.tracksPerCalendarHour.toFixed(2)],
    ['PPL performances (total listener hours x average tracks per hour on air)', String(Math.round(numbers.pplPerformances))],
    ['Census performances (listeners of each music play, summed)', String(numbers.censusPerformances)],
    ['Music plays', String(numbers.musicPlays)],
    ['Plays left out, not music', String(Object.values(facts.excludedKinds).reduce((sum, n) => sum + (n ?? 0), 0))],
    ['Plays left out, shorter than reports.minSeconds', String(facts.excludedShort)],
  ];
  return rows.map(([name, value]) => `${name}\t${tabField(value)}\n`).join('');
}

async function* programme(input: ReportInput): AsyncGenerator<string> {
  yield `${PROGRAMME_COLUMNS.join(',')}\r\n`;
  for await (const batch of input.plays()) {
    yield batch
      .map((play) => `${[play.artist, play.title, play.label, play.catalogue_number, normalizedIsrc(play.isrc)].map(csvField).join(',')}\r\n`)
      .join('');
  }
}

async function* render(input: ReportInput, run: ReportRun, facts: ReportFacts): AsyncGenerator<string> {
  if (run.programmeDate !== undefined) {
    yield* programme(input);
    return;
  }
  yield summary(run, facts, await figures(input, run));
}

export const ppl: ReportFormat = {
  name: 'ppl',
  contentType: (run) => (run.programmeDate === undefined ? 'text/tab-separated-values; charset=utf-8' : 'text/csv; charset=utf-8'),
  needsPerformances: (run) => run.programmeDate === undefined,
  gathersBeforeWriting: () => false,
  asciiNames: [],
  fileName(run) {
    const name = run.channel === undefined ? run.settings.service : `${run.settings.service}-${run.channel}`;
    if (run.programmeDate !== undefined) return fileSafe(`${name}-ppl-programme-${compactDate(run.programmeDate)}.csv`);
    return fileSafe(`${name}-ppl-${compactDate(run.range.from)}-${compactDate(run.range.to)}.txt`);
  },
  render,
};
