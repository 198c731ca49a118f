import type { ReportFacts, ReportFormatName, ReportRun, ReportSettings } from '../../src/reports/format';
import { FORMATS } from '../../src/reports/formats';
import { addDays, startOfLocalDay } from '../../src/reports/local-time';
import type { ListenerSession, ReportPlay } from '../../src/reports/rows';
import { prepareReport, type ReportQuery, type ReportSource } from '../../src/reports/run-report';
import type { Problem } from '../../src/reports/checks';

/** A report source over arrays, sorted and filtered as the store's adapter does. */
export function arraySource(plays: readonly ReportPlay[], sessions: readonly ListenerSession[]): ReportSource {
  const inPlays = (q: ReportQuery) =>
    [...plays]
      .filter((p) => Date.parse(p.started_at) >= q.startMs && Date.parse(p.started_at) < q.endMs && (q.channel === undefined || p.channel === q.channel))
      .sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at) || a.dbid - b.dbid);
  const inSessions = (q: ReportQuery) =>
    [...sessions]
      .filter((s) => Date.parse(s.connected_at) < q.endMs && (s.disconnected_at === null || Date.parse(s.disconnected_at) > q.startMs))
      .filter((s) => q.channel === undefined || s.channel === q.channel)
      .sort((a, b) => Date.parse(a.connected_at) - Date.parse(b.connected_at) || a.id - b.id);
  return {
    plays: (q) => iterate(inPlays(q)),
    sessions: (q) => iterate(inSessions(q)),
    hasSessions: (q) => Promise.resolve(inSessions(q).length > 0),
  };
}

/** Batches of two rows, so that every batch edge is crossed in the tests. */
async function* iterate<T>(items: readonly T[]): AsyncGenerator<readonly T[]> {
  for (let i = 0; i < items.length; i += 2) yield items.slice(i, i + 2);
}

export const US_SETTINGS: ReportSettings = {
  service: 'KSVC',
  category: 'A',
  timeZone: 'America/New_York',
  minSeconds: 0,
  stationType: 'OT',
  stationFormat: 'Eclectic',
  soundexchange: { layout: 'e8', fileName: 'regulation' },
  contact: { name: 'Pat Doe', street: '1 Main Street', city: 'Springfield, IL 62701', phone: '+1 217 555 0100', email: 'reports@ksvc.example' },
};

export function makeRun(format: ReportFormatName, from: string, to: string, settings: ReportSettings, extra: Partial<ReportRun> = {}): ReportRun {
  return {
    format,
    settings,
    range: { from, to, startMs: startOfLocalDay(from, settings.timeZone), endMs: startOfLocalDay(addDays(to, 1), settings.timeZone) },
    nowMs: Date.parse('2026-11-02T09:30:00.000Z'),
    ...extra,
  };
}

export interface Rendered {
  text: string;
  fileName: string;
  problems: Problem[];
  facts: ReportFacts;
}

/** The check and the file (one pass or two, as the format allows), the file collected as text. */
export async function renderToText(source: ReportSource, run: ReportRun, minSessionSeconds = 0): Promise<Rendered> {
  const format = FORMATS[run.format];
  const deps = { source, format, minSessionSeconds };
  const problems: Problem[] = [];
  const { facts, body } = await prepareReport(deps, run, (problem) => {
    problems.push(problem);
  });
  let text = '';
  for await (const piece of body) text += piece;
  return { text, fileName: format.fileName(run, facts), problems, facts };
}
