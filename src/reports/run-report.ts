import { MARKS } from '../domain/recording';
import type { CandidateFilter, PlaySummaryRow, RecognisedPlay } from '../store/play-reports';
import { recognitionLabel } from '../domain/recognised';
import { withListeners } from './census';
import { changesLine, type CorrectedPlay } from '../domain/correction';
import { ChannelEnds, PlayChecker, sessionProblems, type PlayCheckOptions, type PreviousEnd, type Problem } from './checks';
import type { Batches, RecordingLine, ReportFacts, ReportFormat, ReportInput, ReportRun } from './format';
import type { ListenerSession, ReportPlay } from './rows';
import { exclusionOf } from './selection';
import { startsFormula } from './text-fields';

// One report run in two passes over the same rows (docs/reports.md "How a report is made"): the
// check pass lists every problem and learns what the file must know before its first line; the
// write pass streams the file. Neither holds the plays or the sessions. A source with a store
// lets the store count the plays and hand over only those that may have a problem.

export interface ReportQuery {
  startMs: number;
  endMs: number;
  channel?: string;
}

/** Where the rows come from: the play log of the store (the store's adapter implements it). */
export interface ReportSource {
  /** Plays that started in [startMs, endMs), every kind, by started_at then dbid. */
  plays(query: ReportQuery): Batches<ReportPlay>;
  /** Listener sessions overlapping [startMs, endMs), by connected_at then id. */
  sessions(query: ReportQuery): Batches<ListenerSession>;
  /** Whether any session of the channel overlaps the range. */
  hasSessions(query: ReportQuery & { channel: string }): Promise<boolean>;
  /** The same answers made where the rows are stored; without it, every play is read and checked here. */
  stored?: StoredReportQueries;
  /** The range's corrected plays (PATCH /v1/history/<dbid>), in air order: the check names each correction as a note. */
  corrections?: (query: ReportQuery) => Promise<CorrectedPlay[]>;
  /** The range's music plays recognition made, in air order: the check counts them in a note and names each with its score. */
  recognised?: (query: ReportQuery) => Promise<RecognisedPlay[]>;
}

/**
 * A report's rows as of one instant (docs/reports.md "One snapshot"): the check and the file
 * read the same log. release() once the file is written or the check has ended.
 */
export interface ReportSnapshotSource {
  source: ReportSource;
  release(): Promise<void>;
}

/** Opens the snapshot a report over `query` reads. */
export type OpenReportSource = (query: ReportQuery) => Promise<ReportSnapshotSource>;

/** The play passes of a report made by the store (store/play-reports.ts): the source's adapter implements it. */
export interface StoredReportQueries {
  /**
   * The range's plays by kind and channel (plays of `minSeconds` or more are reported). Asked
   * first: the store's report columns of the range are up to date once it answers.
   */
  summary(query: ReportQuery, minSeconds: number): Promise<PlaySummaryRow[]>;
  /**
   * The reported plays that may have a problem, in air order, each with the last valid end
   * before it on its channel: those with a `marks` bit, without an end or with an end before
   * their start, overlapping, without a kept count when `listenersMissing`, and every play of a
   * recording with a name in capitals.
   */
  candidates(query: ReportQuery, minSeconds: number, filter: CandidateFilter): Batches<CheckedPlay>;
  /**
   * The census lines by recording (and channel), in order of first play; undefined when a play
   * has no kept count, so its performances must be counted from the sessions. Asked after summary().
   */
  recordings(query: ReportQuery, minSeconds: number, byChannel: boolean): Promise<Iterable<RecordingLine> | undefined>;
}

/** A play for the check, and the last valid end before it on its channel. */
export interface CheckedPlay {
  play: ReportPlay;
  previous: PreviousEnd | undefined;
}

export interface ReportDeps {
  source: ReportSource;
  format: ReportFormat;
  /** playlog.minSessionSeconds: listener counts made here leave shorter sessions out. */
  minSessionSeconds: number;
}

/** A play may end this long after the range and still take listeners who joined after it. */
const LONGEST_PLAY_MS = 6 * 3_600_000;

const query = (run: ReportRun): ReportQuery => ({ startMs: run.range.startMs, endMs: run.range.endMs, channel: run.channel });

/**
 * Hears each problem; a promise holds the pass until it settles (a slow reader of the check's
 * answer slows the pass down instead of piling problems up).
 */
export type ProblemSink = (problem: Problem) => void | Promise<void>;

/** The check pass: every problem to `onProblem`, in air order, and the facts of the run. */
export async function inspectReport(deps: ReportDeps, run: ReportRun, onProblem: ProblemSink): Promise<ReportFacts> {
  const inspection = new Inspection(deps, run, onProblem);
  const { stored } = deps.source;
  if (stored === undefined) {
    for await (const batch of deps.source.plays(query(run))) await inspection.seePlays(batch);
    return inspection.finish();
  }
  const { minSeconds } = run.settings;
  inspection.count(await stored.summary(query(run), minSeconds));
  for await (const batch of stored.candidates(query(run), minSeconds, inspection.candidateFilter())) await inspection.seeCandidates(batch);
  return inspection.finish();
}

/**
 * The check of one run, fed the plays batch by batch (by the check pass, or by the write pass
 * when one pass does both). Problems are handed over after each batch: a batch's worth at most
 * is held.
 */
class Inspection {
  private readonly facts: ReportFacts = { musicPlays: 0, excludedKinds: {}, excludedShort: 0, channels: [], anyTrimmed: false, problems: 0, notes: 0 };
  private found: Problem[] = [];
  private readonly plays: PlayInspection;
  private readonly needsPerformances: boolean;
  /** Whether a channel has any sessions, so that a count can be made from them: asked once per channel. */
  private readonly sessionsOf = new Map<string, boolean>();

  constructor(
    private readonly deps: ReportDeps,
    private readonly run: ReportRun,
    private readonly onProblem: ProblemSink,
  ) {
    for (const problem of settingProblems(run)) this.report(problem);
    this.needsPerformances = deps.format.needsPerformances(run);
    this.plays = new PlayInspection(run, this.facts, (problem) => this.report(problem), {
      performances: this.needsPerformances,
      ascii: deps.format.asciiNames,
    });
  }

  /** The facts as far as the plays seen so far tell them; complete after finish(). */
  factsSoFar(): ReportFacts {
    return this.facts;
  }

  private report(problem: Problem): void {
    if (problem.note) this.facts.notes++;
    else this.facts.problems++;
    this.found.push(problem);
  }

  private async handOver(): Promise<void> {
    const ready = this.found;
    this.found = [];
    for (const problem of ready) await this.onProblem(problem);
  }

  /** Every play of the range, in air order. */
  async seePlays(batch: readonly ReportPlay[]): Promise<void> {
    for (const play of batch) this.plays.inspect(play, await this.channelHasSessions(play));
    if (this.found.length > 0) await this.handOver();
  }

  /** The stored counts of the range's plays, in place of seeing each (seeCandidates then checks). */
  count(summary: readonly PlaySummaryRow[]): void {
    this.plays.count(summary);
  }

  /** Which plays the check must see when the store sifts them (StoredReportQueries.candidates). */
  candidateFilter(): CandidateFilter {
    return {
      marks:
        MARKS.noName | MARKS.formula | (this.plays.checksIdentity ? MARKS.unidentified : 0) | (this.deps.format.asciiNames.length > 0 ? MARKS.notAscii : 0),
      listenersMissing: this.needsPerformances,
      spellings: this.plays.anyCapitals,
    };
  }

  /** The reported plays that may have a problem, in air order. */
  async seeCandidates(batch: readonly CheckedPlay[]): Promise<void> {
    for (const { play, previous } of batch) this.plays.check(play, await this.channelHasSessions(play), previous);
    if (this.found.length > 0) await this.handOver();
  }

  private async channelHasSessions(play: ReportPlay): Promise<boolean> {
    const { run, sessionsOf } = this;
    if (this.needsPerformances && play.listeners === null && !sessionsOf.has(play.channel))
      sessionsOf.set(
        play.channel,
        await this.deps.source.hasSessions({ startMs: run.range.startMs, endMs: run.range.endMs + LONGEST_PLAY_MS, channel: play.channel }),
      );
    return sessionsOf.get(play.channel) ?? true;
  }

  async finish(): Promise<ReportFacts> {
    const { run, facts } = this;
    this.plays.finish();
    if (run.nowMs < run.range.endMs) this.report({ subject: 'report', what: `the range ends after now (${run.range.to} is not over): ask again once it is` });
    if (run.format === 'npr-playlist' && run.channel === undefined && facts.channels.length > 1)
      this.report({
        subject: 'report',
        what: `plays on ${facts.channels.length} channels (${facts.channels.join(', ')}): NPR/DS takes one file per stream; choose one with --channel`,
      });
    if (['soundexchange', 'ppl', 'prs', 'bmi'].includes(run.format) && run.channel === undefined && facts.channels.length > 1)
      this.report({
        subject: 'report',
        what: `one file for ${facts.channels.length} channels (${facts.channels.join(', ')}); if each is a licensed service of its own, make one file each with --channel`,
        note: true,
      });
    if (run.format !== 'npr-streams') await this.correctionNotes();
    if (run.format !== 'npr-streams') await this.recognitionNotes();
    if (run.format === 'npr-streams') {
      const listed = await inspectSessions(
        this.deps,
        run,
        (problem) => this.report(problem),
        () => this.handOver(),
      );
      facts.channels = listed.channels;
      facts.sessions = listed.sessions;
    }
    if (facts.channels.length === 0) await this.nothingReported();
    else if (run.channel !== undefined && !facts.channels.includes(run.channel)) await this.nothingReported();
    await this.handOver();
    return facts;
  }

  /** Each correction of a play of the range, as a note (docs/reports.md "Checks"): what a file says differs from what was logged on air. */
  private async correctionNotes(): Promise<void> {
    const { run, deps } = this;
    if (!deps.source.corrections) return;
    const query: ReportQuery = { startMs: run.range.startMs, endMs: run.range.endMs, ...(run.channel === undefined ? {} : { channel: run.channel }) };
    for (const play of await deps.source.corrections(query))
      for (const correction of play.corrections)
        this.report({
          subject: `dbid ${play.dbid}`,
          what: `corrected at ${correction.at} by ${correction.by}: ${changesLine(correction.changes)}`,
          note: true,
        });
  }

  /**
   * The plays recognition made (docs/recognition.md "A recognised play"), as notes: how many of
   * the range's music plays, then each with its score. Names the file says came from the audio.
   */
  private async recognitionNotes(): Promise<void> {
    const { run, deps, facts } = this;
    if (!deps.source.recognised) return;
    const query: ReportQuery = { startMs: run.range.startMs, endMs: run.range.endMs, ...(run.channel === undefined ? {} : { channel: run.channel }) };
    const plays = await deps.source.recognised(query);
    if (plays.length === 0) return;
    const scores = plays.map((play) => play.score).filter((score): score is number => score !== null);
    const range = scores.length === 0 ? '' : `, scores ${Math.min(...scores).toFixed(3)} to ${Math.max(...scores).toFixed(3)}`;
    this.report({
      subject: 'report',
      what: `${plays.length} of ${facts.musicPlays} music plays were recognised from the audio, not sent by the source${range} (docs/recognition.md)`,
      note: true,
    });
    for (const play of plays) this.report({ subject: `dbid ${play.dbid}`, what: recognitionLabel(play.score, play.rate), note: true });
  }

  /** No play (no session for npr-streams) in the range: name the channels the range has, if any. */
  private async nothingReported(): Promise<void> {
    const { run } = this;
    const what = run.format === 'npr-streams' ? 'listener sessions' : 'music plays';
    if (run.channel === undefined) {
      this.report({ subject: 'report', what: `no ${what} from ${run.range.from} to ${run.range.to}: nothing to report` });
      return;
    }
    const channels = await rangeChannels(this.deps, run);
    const known = channels.length === 0 ? 'the range has no plays on any channel' : `the range's channels: ${channels.join(', ')}`;
    this.report({ subject: 'report', what: `no ${what} on channel "${run.channel}" from ${run.range.from} to ${run.range.to} (${known})` });
  }
}

/** What the check pass does with each play. */
class PlayInspection {
  private readonly checker: PlayChecker;
  private readonly ends = new ChannelEnds();
  private readonly channels = new Set<string>();
  readonly checksIdentity: boolean;
  /** Whether the summary counted a music play with a name in capitals (count() sets it). */
  anyCapitals = false;

  constructor(
    private readonly run: ReportRun,
    private readonly facts: ReportFacts,
    private readonly report: (problem: Problem) => void,
    checks: Omit<PlayCheckOptions, 'identity'>,
  ) {
    this.checksIdentity = ['soundexchange', 'ppl'].includes(run.format);
    const heard = run.settings.heardChannels;
    this.checker = new PlayChecker({ ...checks, identity: this.checksIdentity, ...(heard === undefined ? {} : { heard: new Set(heard) }) });
  }

  /** One play of the range: counted, and checked when reported. */
  inspect(play: ReportPlay, channelHasSessions: boolean): void {
    const { facts } = this;
    const exclusion = exclusionOf(play, this.run.settings.minSeconds);
    if (exclusion === 'kind') facts.excludedKinds[play.kind] = (facts.excludedKinds[play.kind] ?? 0) + 1;
    if (exclusion === 'short') facts.excludedShort++;
    if (exclusion !== undefined) return;
    facts.musicPlays++;
    this.channels.add(play.channel);
    if (play.trimmed_seconds > 0) facts.anyTrimmed = true;
    this.check(play, channelHasSessions, this.ends.next(play));
  }

  /** The counts inspect() makes, from the store's summary. */
  count(summary: readonly PlaySummaryRow[]): void {
    const { facts } = this;
    for (const row of summary) {
      if (row.kind !== 'music') {
        const kind = row.kind as ReportPlay['kind'];
        facts.excludedKinds[kind] = (facts.excludedKinds[kind] ?? 0) + row.plays;
        continue;
      }
      facts.excludedShort += row.short;
      facts.musicPlays += row.plays - row.short;
      if (row.plays > row.short) this.channels.add(row.channel);
      if (row.trimmed) facts.anyTrimmed = true;
      if (row.capitals > 0) this.anyCapitals = true;
    }
  }

  /** One reported play's problems (none for the streaming log, which lists no plays). */
  check(play: ReportPlay, channelHasSessions: boolean, previous: PreviousEnd | undefined): void {
    if (this.run.format === 'npr-streams') return;
    for (const problem of this.checker.check(play, channelHasSessions, previous)) this.report(problem);
  }

  finish(): void {
    if (this.checker.overlaps > 0) this.facts.anyTrimmed = true;
    this.facts.channels = [...this.channels].sort();
  }
}

/** The channels of the range's plays, every channel asked. */
async function rangeChannels(deps: ReportDeps, run: ReportRun): Promise<string[]> {
  const wide = { startMs: run.range.startMs, endMs: run.range.endMs };
  const channels = new Set<string>();
  if (deps.source.stored !== undefined) for (const row of await deps.source.stored.summary(wide, run.settings.minSeconds)) channels.add(row.channel);
  else for await (const batch of deps.source.plays(wide)) for (const play of batch) channels.add(play.channel);
  return [...channels].sort();
}

/** Config the file cannot do without. */
function settingProblems(run: ReportRun): Problem[] {
  const missing: string[] = [];
  if (['soundexchange', 'bmi', 'ppl'].includes(run.format) && run.settings.service.trim() === '') missing.push('reports.service (the name of the service)');
  if (run.format === 'soundexchange' && run.settings.category.trim() === '') missing.push('reports.category (the transmission category)');
  return missing.map((key) => ({ subject: 'report', what: `${key} is not set` }));
}

/** The streaming log's check; answers the channels of the range's sessions, and how many it lists. */
async function inspectSessions(
  deps: ReportDeps,
  run: ReportRun,
  report: (problem: Problem) => void,
  handOver: () => Promise<void>,
): Promise<{ channels: string[]; sessions: number }> {
  let withoutAddress = 0;
  let sessions = 0;
  const channels = new Set<string>();
  for await (const batch of deps.source.sessions(query(run))) {
    for (const session of batch) inspectSession(session);
    await handOver();
  }
  function inspectSession(session: ListenerSession): void {
    const connectedMs = Date.parse(session.connected_at);
    if (connectedMs < run.range.startMs || connectedMs >= run.range.endMs) return;
    sessions++;
    channels.add(session.channel);
    for (const problem of formulaSessionNotes(session)) report(problem);
    if (session.address === undefined || session.address === '') withoutAddress++;
    for (const problem of sessionProblems(session)) report(problem);
  }
  if (withoutAddress > 0)
    report({
      subject: 'report',
      what: `${withoutAddress} of ${sessions} sessions have only a hashed address; NPR/DS needs the address (set playlog.keepAddresses)`,
    });
  const sorted = [...channels].sort();
  if (run.channel === undefined && sorted.length > 1)
    report({
      subject: 'report',
      what: `sessions on ${sorted.length} channels (${sorted.join(', ')}): NPR/DS no longer accepts two streams in one log file; choose one with --channel`,
    });
  return { channels: sorted, sessions };
}

/** A player name a spreadsheet would run as a formula (written neutralised). */
function formulaSessionNotes(session: ListenerSession): Problem[] {
  if (!startsFormula(session.user_agent)) return [];
  return [
    {
      subject: `session ${session.id}`,
      what: `user agent "${(session.user_agent ?? '').slice(0, 80)}" starts like a spreadsheet formula; written with a leading '`,
      note: true,
    },
  ];
}

/**
 * The rows the write pass gives the format. `onRawPlays` sees each batch as the log holds it
 * (every kind, listeners as kept), before the exclusions and the counting.
 */
export function reportInput(deps: ReportDeps, run: ReportRun, onRawPlays?: (batch: readonly ReportPlay[]) => Promise<void>): ReportInput {
  return {
    plays: () => {
      const raw = deps.source.plays(query(run));
      const reported = reportedPlays(onRawPlays === undefined ? raw : tapped(raw, onRawPlays), run);
      if (!deps.format.needsPerformances(run)) return reported;
      const sessions = () => deps.source.sessions({ ...query(run), endMs: run.range.endMs + LONGEST_PLAY_MS });
      return withListeners(reported, sessions, { minSessionSeconds: deps.minSessionSeconds, nowMs: run.nowMs });
    },
    airPlays: () => deps.source.plays(query(run)),
    sessions: () => deps.source.sessions(query(run)),
    recordings: (byChannel) => deps.source.stored?.recordings(query(run), run.settings.minSeconds, byChannel) ?? Promise.resolve(undefined),
  };
}

async function* tapped<T>(batches: Batches<T>, see: (batch: readonly T[]) => Promise<void>): Batches<T> {
  for await (const batch of batches) {
    await see(batch);
    yield batch;
  }
}

async function* reportedPlays(plays: Batches<ReportPlay>, run: ReportRun): Batches<ReportPlay> {
  for await (const batch of plays) {
    const reported = batch.filter((play) => exclusionOf(play, run.settings.minSeconds) === undefined);
    if (reported.length > 0) yield reported;
  }
}

/** The write pass: the file, piece by piece. */
export function renderReport(deps: ReportDeps, run: ReportRun, facts: ReportFacts): AsyncIterable<string> {
  return deps.format.render(reportInput(deps, run), run, facts);
}

/** A run checked and ready to write: its facts, and the file to stream when they allow it. */
export interface PreparedReport {
  facts: ReportFacts;
  body: AsyncIterable<string> | Iterable<string>;
}

/**
 * The check, then the file (docs/reports.md "How a report is made"). From a source without a
 * store, a format that gathers every play before its first line is checked and written in one
 * pass over the log, its few lines held until the check is done; anything else is checked first
 * (by the store's queries when it has them) and streamed by a second pass.
 */
export async function prepareReport(deps: ReportDeps, run: ReportRun, onProblem: ProblemSink): Promise<PreparedReport> {
  if (!deps.format.gathersBeforeWriting(run) || deps.source.stored !== undefined) {
    const facts = await inspectReport(deps, run, onProblem);
    return { facts, body: renderReport(deps, run, facts) };
  }
  const inspection = new Inspection(deps, run, onProblem);
  const pieces: string[] = [];
  const input = reportInput(deps, run, (batch) => inspection.seePlays(batch));
  for await (const piece of deps.format.render(input, run, inspection.factsSoFar())) pieces.push(piece);
  return { facts: await inspection.finish(), body: pieces };
}
