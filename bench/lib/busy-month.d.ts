// Types of busy-month.js for the TypeScript tests that seed the same month.
export interface BusyMonth {
  plays: number;
  musicPlays: number;
  /** Distinct recordings among the music plays. */
  recordings: number;
  sessions: number;
  from: string;
  to: string;
}
export function seedBusyMonth(file: string, options?: { nullEvery?: number; sessions?: number }): BusyMonth;
export const MONTH_START: number;
export const DAYS: number;
export const PLAYS_PER_DAY: number;
export const SESSIONS: number;
export const RECORDINGS: number;
