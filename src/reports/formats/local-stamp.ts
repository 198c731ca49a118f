import { localParts, pad2, pad4 } from '../local-time';

// The date-time spellings the files use, from an ISO instant and the station's zone. Pure.

/** NPR/DS playlist: `MM/DD/YYYY HH:MM:SS`, local time, to the second. */
export function nprLocalTime(ms: number, timeZone: string): string {
  const p = localParts(ms, timeZone);
  return `${pad2(p.month)}/${pad2(p.day)}/${pad4(p.year)} ${pad2(p.hour)}:${pad2(p.minute)}:${pad2(p.second)}`;
}

/** `YYYY-MM-DD` and `HH:MM:SS` in UTC. */
export function utcDateAndTime(ms: number): [string, string] {
  const iso = new Date(ms).toISOString();
  return [iso.slice(0, 10), iso.slice(11, 19)];
}
