// ISO 8601 date-times as svc stores them: UTC with milliseconds (received_at), so that they
// compare as strings in time order. Pure; imports nothing.

const LAST_ISO_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?)?(Z|[+-]\d{2}:\d{2})?$/i;

/**
 * An ISO 8601 date or date-time, normalized to how received_at is stored (UTC, milliseconds).
 * Without an offset it is read in `zoneless` time: UTC for the API, the local zone for the CLI
 * (a DJ types the clock on the wall). Impossible dates (February 30) are refused, not rolled over.
 */
export function parseIsoDateTime(value: string, zoneless: 'utc' | 'local'): string | undefined {
  const match = ISO_DATE_TIME.exec(value);
  if (!match) return undefined;
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', offset] = match;
  const numbers = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  const [y, mo, d, h, mi, s] = numbers;
  const calendar = new Date(Date.UTC(y, mo - 1, d));
  if (calendar.getUTCMonth() !== mo - 1 || calendar.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return undefined;
  const ms = fraction === '' ? 0 : Math.floor(Number(`0${fraction}`) * 1000);
  let time: number;
  if (offset === undefined && zoneless === 'local') {
    time = new Date(y, mo - 1, d, h, mi, s, ms).getTime();
  } else {
    time = Date.UTC(y, mo - 1, d, h, mi, s, ms) - offsetMinutes(offset ?? 'Z') * 60_000;
  }
  // Four-digit years only (Date.UTC reads 0-99 as 1900-1999; past 9999 ISO strings stop sorting).
  if (y < 1000 || !(time <= LAST_ISO_TIME)) return undefined;
  return new Date(time).toISOString();
}

/** `Z`, `+01:00`, `-05:30` in minutes east of UTC; NaN for hours or minutes out of range. */
function offsetMinutes(offset: string): number {
  if (offset.toUpperCase() === 'Z') return 0;
  const sign = offset.startsWith('-') ? -1 : 1;
  const [hours, minutes] = offset.slice(1).split(':').map(Number) as [number, number];
  return hours > 23 || minutes > 59 ? NaN : sign * (hours * 60 + minutes);
}
