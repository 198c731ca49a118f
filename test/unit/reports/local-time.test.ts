import { localParts, startOfLocalDay } from '../../../src/reports/local-time';

// The station's local time (docs/reports.md "Dates and time zones"): UTC is computed without Intl,
// and must agree with Intl's own UTC zone to the second.

describe('local time', () => {
  it('When the zone is UTC, then the wall clock is Intl’s Etc/UTC for instants across years and leap days', () => {
    const instants = [Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2026, 0, 1, 0, 0, 0), Date.UTC(1999, 11, 31, 12, 30, 15)];
    for (let ms = Date.UTC(2026, 9, 1); ms < Date.UTC(2026, 9, 3); ms += 3_599_777) instants.push(ms);
    for (const ms of instants) expect(localParts(ms, 'UTC')).toEqual(localParts(ms, 'Etc/UTC'));
  });

  it('When a day begins in London across the October change, then its first instant is local midnight', () => {
    expect(new Date(startOfLocalDay('2026-10-25', 'Europe/London')).toISOString()).toBe('2026-10-24T23:00:00.000Z');
    expect(new Date(startOfLocalDay('2026-10-26', 'Europe/London')).toISOString()).toBe('2026-10-26T00:00:00.000Z');
    expect(new Date(startOfLocalDay('2026-10-26', 'UTC')).toISOString()).toBe('2026-10-26T00:00:00.000Z');
  });
});
