// Local dates and times in the station's time zone (docs/reports.md "Dates and time zones"), with
// Intl only: no time-zone database of our own. Pure.

export interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** True when Intl knows the zone name (`Europe/London`, `UTC`, ...). */
export function isTimeZone(name: string): boolean {
  try {
    formatterFor(name);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock fields of an instant in a zone. */
export function localParts(ms: number, timeZone: string): LocalParts {
  // UTC needs no zone rules; Intl's formatting costs microseconds a call, per play of a month.
  if (timeZone === 'UTC') {
    const date = new Date(ms);
    const [year, month, day] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
    return { year, month, day, hour: date.getUTCHours(), minute: date.getUTCMinutes(), second: date.getUTCSeconds() };
  }
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(ms))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return { year: parts.year, month: parts.month, day: parts.day, hour: parts.hour, minute: parts.minute, second: parts.second };
}

function offsetMs(ms: number, timeZone: string): number {
  const p = localParts(ms, timeZone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(ms / 1000) * 1000;
}

/** The instant a local date begins (its first existing wall-clock second, across DST gaps). */
export function startOfLocalDay(date: string, timeZone: string): number {
  const [year, month, day] = date.split('-').map(Number);
  const wall = Date.UTC(year, month - 1, day);
  let guess = wall - offsetMs(wall, timeZone);
  guess = wall - offsetMs(guess, timeZone);
  // In a gap at midnight the guess lands on the previous day: step to the first instant of the date.
  const parts = localParts(guess, timeZone);
  if (parts.day !== day) guess += 3_600_000 - (parts.minute * 60 + parts.second) * 1000;
  return guess;
}

/** `YYYY-MM-DD` plus `days`, as a date (no time zone involved). */
export function addDays(date: string, days: number): string {
  const [year, month, day] = date.split('-').map(Number);
  return new Date(Date.UTC(year, month - 1, day + days)).toISOString().slice(0, 10);
}

/** `YYYY-MM-DD` that names a real calendar date. */
export function isCalendarDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  return addDays(text, 0) === text;
}

export const pad2 = (n: number): string => String(n).padStart(2, '0');
export const pad4 = (n: number): string => String(n).padStart(4, '0');

/** `HH:MM:SS` of a number of seconds (hours may pass 99 only for absurd lengths). */
export function clockOfSeconds(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  return `${pad2(Math.floor(whole / 3600))}:${pad2(Math.floor((whole % 3600) / 60))}:${pad2(whole % 60)}`;
}
