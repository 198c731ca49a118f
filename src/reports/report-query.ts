import { AppError } from '../errors';
import { REPORT_FORMATS, type ReportFormatName, type ReportRun, type ReportSettings } from './format';
import { addDays, isCalendarDate, startOfLocalDay } from './local-time';
import { settingsForChannel } from './settings';

// A report request's parameters, from the HTTP query or the command line, checked into a run
// (docs/reports.md "Asking for a report"). Pure: the clock comes in.

/** The longest range one request may ask for; a year of a busy station still streams in minutes. */
export const MAX_REPORT_DAYS = 366;

export interface ReportParameters {
  from?: string;
  to?: string;
  channel?: string;
  variant?: string;
  programme?: string;
}

const VARIANTS: Partial<Record<ReportFormatName, readonly string[]>> = { soundexchange: ['csv'] };

export function isReportFormat(name: string): name is ReportFormatName {
  return (REPORT_FORMATS as readonly string[]).includes(name);
}

function invalid(message: string): AppError {
  return new AppError('INVALID_PARAMETERS', message);
}

/** The dates a report may name: a play log has nothing before 1970, and 9999-12-31 has no next day to end at. */
const FIRST_DATE = '1970-01-01';
const LAST_DATE = '2999-12-31';

function localDate(name: string, value: string | undefined): string {
  if (value === undefined || value === '') throw invalid(`${name} is required: a local date YYYY-MM-DD`);
  if (!isCalendarDate(value)) throw invalid(`${name} must be a local date YYYY-MM-DD, got ${JSON.stringify(value.slice(0, 40))}`);
  if (value < FIRST_DATE || value > LAST_DATE) throw invalid(`${name} must be a date from ${FIRST_DATE} to ${LAST_DATE}, got ${value}`);
  return value;
}

function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

/** The run a request asks for, or a 400 naming the parameter. */
export function reportRun(format: ReportFormatName, parameters: ReportParameters, stationSettings: ReportSettings, nowMs: number): ReportRun {
  const programme = parameters.programme === undefined || parameters.programme === '' ? undefined : localDate('programme', parameters.programme);
  if (programme !== undefined && format !== 'ppl') throw invalid('programme is a date of the ppl format only');
  const from = programme ?? localDate('from', parameters.from);
  const to = programme ?? localDate('to', parameters.to);
  const days = daysBetween(from, to);
  if (days < 0) throw invalid(`to (${to}) is before from (${from})`);
  if (days >= MAX_REPORT_DAYS) throw invalid(`from and to span ${days + 1} days; at most ${MAX_REPORT_DAYS} in one report`);
  const variant = parameters.variant === '' ? undefined : parameters.variant;
  if (variant !== undefined && !(VARIANTS[format] ?? []).includes(variant))
    throw invalid(`variant ${JSON.stringify(variant.slice(0, 40))} is not one of ${format}'s: ${(VARIANTS[format] ?? []).join(', ') || 'none'}`);
  const channel = parameters.channel === '' ? undefined : parameters.channel;
  // docs/channels.md: a declared channel's report identity names the service, category and zone of its files.
  const settings = settingsForChannel(stationSettings, channel);
  return {
    format,
    settings,
    range: { from, to, startMs: startOfLocalDay(from, settings.timeZone), endMs: startOfLocalDay(addDays(to, 1), settings.timeZone) },
    channel,
    variant,
    programmeDate: programme,
    nowMs,
  };
}
