import type { ListenerSession, ReportPlay } from './rows';
import { LONG_PLAY_SECONDS } from '../domain/play';
import { LOWER_CASE, SPELLED_FIELDS, isAllCapitals, normalizedIsrc, spellingKey, validIsrc } from '../domain/recording';
import { asciiSpelling, startsFormula } from '../domain/report-text';

// What `svc report check` finds in the rows a file would be made from (docs/reports.md "Checks").
// Each problem names the play (`dbid <n>`) or the session it is about. Pure, one row at a time:
// the checker keeps only the last end per channel.

export interface Problem {
  /** `dbid 12`, `session 7`, or `report` for the run as a whole. */
  subject: string;
  what: string;
  /** A note: named, but it blocks no file (a cell written neutralised). */
  note?: true;
}

export const problemLine = (problem: Problem): string => `${problem.note ? 'note: ' : ''}${problem.subject}: ${problem.what}`;

/** Which checks a format wants. */
export interface PlayCheckOptions {
  /** A row must be identified by an ISRC, or by album and label (SoundExchange, PPL). */
  identity: boolean;
  /** A play needs a listener count (census): `channelHasSessions` says whether one can be made. */
  performances: boolean;
  /** The names the file writes in ASCII (SoundExchange, BMI): one without an ASCII spelling is a problem. */
  ascii: readonly AsciiName[];
  /** The channels an audience mount feeds (ReportSettings.heardChannels); absent: not checked. */
  heard?: ReadonlySet<string>;
}

/** A name an ASCII file may write: a recording's names, or its writers (BMI). */
export type AsciiName = (typeof SPELLED_FIELDS)[number] | 'writers';

/** The play with a valid end that came last on a channel before the one checked (the overlap check). */
export interface PreviousEnd {
  dbid: number;
  endedAt: string;
}

/** Each channel's last valid end, for a check fed every reported play in air order. */
export class ChannelEnds {
  private readonly last = new Map<string, PreviousEnd>();

  /** The previous end on `play`'s channel; `play` then takes its place when its end is valid. */
  next(play: ReportPlay): PreviousEnd | undefined {
    const previous = this.last.get(play.channel);
    if (play.ended_at !== null && Date.parse(play.ended_at) >= Date.parse(play.started_at))
      this.last.set(play.channel, { dbid: play.dbid, endedAt: play.ended_at });
    return previous;
  }
}

export class PlayChecker {
  private readonly spellings = new SpellingTracker();
  /** Plays found starting before the previous one on their channel ended. */
  overlaps = 0;

  constructor(private readonly options: PlayCheckOptions) {}

  /**
   * The problems of one reported play; plays arrive in air order. The capitals check compares a
   * recording's plays, so either every reported play comes, or every play of each recording that
   * has a name in capitals (docs/reports.md "Checks").
   */
  check(play: ReportPlay, channelHasSessions: boolean, previous: PreviousEnd | undefined): Problem[] {
    const whats = this.timeProblems(play, previous);
    namesMissing(play, whats);
    capitalProblems(play, whats);
    if (this.options.identity) identityProblems(play, whats);
    if (this.options.ascii.length > 0) asciiProblems(play, this.options.ascii, whats);
    if (this.options.performances && play.listeners === null && !channelHasSessions)
      whats.push(`no performances: no listener count was kept and channel "${play.channel}" has no listener sessions`);
    // docs/channels.md "No silent zeros": nobody was counted because nothing could count them.
    if (this.options.performances && this.options.heard && play.listeners?.atp === 0 && !this.options.heard.has(play.channel))
      whats.push(`0 listeners on channel "${play.channel}", which no audience mount feeds (playlog.icecast, channels[].audience): not a count of its audience`);
    const spelling = this.spellings.see(play);
    const notes = formulaNotes(play);
    if (whats.length === 0 && notes.length === 0) return spelling;
    const subject = `dbid ${play.dbid}`;
    return [...whats.map((what) => ({ subject, what })), ...notes.map((what): Problem => ({ subject, what, note: true })), ...spelling];
  }

  private timeProblems(play: ReportPlay, previous: PreviousEnd | undefined): string[] {
    const whats: string[] = [];
    const startMs = Date.parse(play.started_at);
    const endMs = play.ended_at === null ? undefined : Date.parse(play.ended_at);
    if (endMs === undefined) whats.push('no end time (still on air, or never ended)');
    else if (endMs < startMs) whats.push(`ends (${play.ended_at}) before it starts (${play.started_at})`);
    else tooLong(play, (endMs - startMs) / 1000, whats);
    const previousEndMs = previous === undefined ? undefined : Date.parse(previous.endedAt);
    if (previous && previousEndMs !== undefined && previousEndMs > startMs) {
      const seconds = (previousEndMs - startMs) / 1000;
      this.overlaps++;
      whats.push(`starts ${formatSeconds(seconds)} s before dbid ${previous.dbid} ends on channel "${play.channel}" (overlap)`);
    }
    return whats;
  }
}

/**
 * On air far longer than the recording (twice its length and ten minutes more) or than
 * LONG_PLAY_SECONDS: an end that was lost (docs/reports.md "Checks").
 */
function tooLong(play: ReportPlay, aired: number, whats: string[]): void {
  const { duration } = play;
  const longer = duration !== undefined && duration > 0 && aired > 2 * duration + 600;
  if (!longer && aired <= LONG_PLAY_SECONDS) return;
  const of = duration !== undefined && duration > 0 ? ` of a ${Math.round(duration)}-s recording` : '';
  whats.push(`on air ${formatSeconds(Math.round(aired))} s${of}: far longer than it can have played; set its end (svc edit ${play.dbid} ended_at=...)`);
}

/**
 * 37 CFR 370.4(e)(6) asks for ASCII, and BMI's records are ASCII bytes: a name the file writes
 * with characters that have no ASCII spelling is written with `?`.
 */
function asciiProblems(play: ReportPlay, names: readonly AsciiName[], whats: string[]): void {
  for (const field of names) {
    const values = field === 'writers' ? (play.composers ?? []) : [play[field]];
    for (const value of values)
      if (value !== undefined && asciiSpelling(value).untransliterable)
        whats.push(`${field} "${value}" has no ASCII spelling (written "${asciiSpelling(value).text}"); give it one with svc edit ${play.dbid} ${field}=...`);
  }
}

/** Names a spreadsheet would run as a formula: written with a leading `'` (OWASP), and noted. */
function formulaNotes(play: ReportPlay): string[] {
  return SPELLED_FIELDS.filter((field) => startsFormula(play[field])).map(
    (field) => `${field} "${play[field] ?? ''}" starts like a spreadsheet formula; written with a leading '`,
  );
}

function formatSeconds(seconds: number): string {
  return Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(3);
}

function namesMissing(play: ReportPlay, whats: string[]): void {
  for (const field of ['artist', 'title'] as const) if ((play[field] ?? '').trim() === '') whats.push(`no ${field}`);
}

/**
 * SoundExchange identifies a recording by its ISRC, or else needs album and label
 * (docs/decisions.md "Reports").
 */
function identityProblems(play: ReportPlay, whats: string[]): void {
  if (validIsrc(play.isrc) !== undefined) return;
  const missing = (['album', 'label'] as const).filter((field) => (play[field] ?? '').trim() === '');
  if (missing.length === 0) return;
  const said = normalizedIsrc(play.isrc) === undefined ? 'no ISRC' : `ISRC "${play.isrc ?? ''}" is not 12 characters of the form CC-XXX-YY-NNNNN`;
  whats.push(`${said} and no ${missing.join(' and no ')}`);
}

/** A name upper-cased somewhere on its way while the matched source spells it otherwise. */
function capitalProblems(play: ReportPlay, whats: string[]): void {
  if (play.source_names === undefined) return;
  for (const field of SPELLED_FIELDS) {
    const value = play[field];
    const source = play.source_names?.[field];
    if (value === undefined || source === undefined || !isAllCapitals(value) || isAllCapitals(source)) continue;
    if (value.toLocaleUpperCase() !== source.toLocaleUpperCase()) continue;
    whats.push(`${field} "${value}" is in capitals; the source spells it "${source}"`);
  }
}

/** The problems of one listener session for the NPR/DS streaming log. */
export function sessionProblems(session: ListenerSession): Problem[] {
  const subject = `session ${session.id}`;
  const whats: string[] = [];
  const connected = Date.parse(session.connected_at);
  if (session.disconnected_at !== null && Date.parse(session.disconnected_at) < connected)
    whats.push(`disconnects (${session.disconnected_at}) before it connects (${session.connected_at})`);
  return whats.map((what) => ({ subject, what }));
}

interface Pending {
  value: string;
  dbids: number[];
}

type NameField = (typeof SPELLED_FIELDS)[number];

/** What one recording's names looked like so far: the first mixed-case spelling, the capitals waiting for one. */
interface Spellings {
  known: Partial<Record<NameField, string>>;
  pending?: Partial<Record<NameField, Pending[]>>;
}

/**
 * The other source of a spelling: the same recording (its ISRC, else its artist and title in any
 * case) played elsewhere in the range with the name in mixed case. A play in capitals is named
 * when the mixed-case spelling is known, at once or when it first appears; memory grows with the
 * recordings, not the plays.
 */
class SpellingTracker {
  private readonly recordings = new Map<string, Spellings>();

  see(play: ReportPlay): Problem[] {
    let problems: Problem[] | undefined;
    const key = spellingKey(play);
    let spellings = this.recordings.get(key);
    if (spellings === undefined) {
      spellings = { known: {} };
      this.recordings.set(key, spellings);
    }
    for (const field of SPELLED_FIELDS) {
      const value = play[field];
      if (value === undefined || play.source_names?.[field] !== undefined) continue;
      const found = isAllCapitals(value) ? capitals(spellings, field, value, play.dbid) : LOWER_CASE.test(value) ? mixed(spellings, field, value) : undefined;
      if (found !== undefined) (problems ??= []).push(...found);
    }
    return problems ?? [];
  }
}

function capitals(spellings: Spellings, field: NameField, value: string, dbid: number): Problem[] | undefined {
  const spelling = spellings.known[field];
  if (spelling !== undefined && sameName(spelling, value)) return [capitalsProblem(dbid, field, value, spelling)];
  spellings.pending ??= {};
  const list = (spellings.pending[field] ??= []);
  const entry = list.find((item) => item.value === value);
  if (entry) entry.dbids.push(dbid);
  else list.push({ value, dbids: [dbid] });
  return undefined;
}

function mixed(spellings: Spellings, field: NameField, value: string): Problem[] | undefined {
  spellings.known[field] ??= value;
  const { pending } = spellings;
  const list = pending?.[field];
  if (pending === undefined || list === undefined) return undefined;
  const found = list.filter((item) => sameName(item.value, value));
  if (found.length === 0) return undefined;
  pending[field] = list.filter((item) => !found.includes(item));
  return found.flatMap((item) => item.dbids.map((dbid) => capitalsProblem(dbid, field, item.value, value)));
}

const sameName = (a: string, b: string): boolean => a.toUpperCase() === b.toUpperCase();

function capitalsProblem(dbid: number, field: string, value: string, spelling: string): Problem {
  return { subject: `dbid ${dbid}`, what: `${field} "${value}" is in capitals; the same recording is spelled "${spelling}" elsewhere in the log` };
}
