import { complementWarnings, COMPLEMENT_WINDOW_MS } from './complement';
import { countListeners, type EndReason } from '../domain/play';
import type { TrackRecord } from '../domain/track';
import { errorMessage } from '../errors';
import type { Logger } from '../log';
import type { PlayLogStore } from '../store/plays';
import type { PlayPolicy } from './play-policy';
import type { PlayLogPort } from './port';

// What keeps the play log true between submissions (docs/play-log.md): plays whose submitted
// duration runs out end on time, every ended play has its listeners counted once, and the
// performance complement is checked as each play starts.

export interface PlayLogOptions {
  plays: PlayLogStore;
  policy: PlayPolicy;
  logger: Logger;
  /** Whether any listener source is configured; without one, listeners stay null. */
  countsListeners: boolean;
  /** `playlog.complement`: whether plays are checked against the performance complement. */
  complement: boolean;
  minSessionSeconds: number;
  /**
   * Plays whose end or listener count changed here: the current track's copy on /v1/last and the
   * streams is refreshed (the composition root). Awaited, so an explicit end shows before its answer.
   */
  onPlaysChanged?: (dbids: readonly number[]) => Promise<void>;
  now?: () => number;
}

/** Plays counted per store read. */
const COUNT_BATCH = 100;
/** setTimeout's longest wait; a later planned end is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Complement warnings kept for GET /v1/status, newest last. */
const KEPT_WARNINGS = 20;

export interface StatusWarning {
  at: string;
  channel: string;
  dbid: number;
  warning: string;
}

export class PlayLog implements PlayLogPort {
  readonly policy: PlayPolicy;
  private timer: NodeJS.Timeout | undefined;
  private counting: Promise<void> | undefined;
  private countAgain = false;
  private scheduling: Promise<void> | undefined;
  private scheduleAgain = false;
  private closed = false;
  private readonly recent: StatusWarning[] = [];
  private readonly now: () => number;

  constructor(private readonly options: PlayLogOptions) {
    this.policy = options.policy;
    this.now = options.now ?? Date.now;
  }

  /** At start: plays whose duration ran out while svc was down end now, and waiting counts run. */
  start(): void {
    this.changed();
  }

  /** A play was stored (the one before it on its channel may have ended). */
  started(): void {
    this.changed();
  }

  /** Ends the channel's play on air (`POST /v1/remoteinput/end`, a source that went away). */
  async end(channel: string, reason: EndReason): Promise<number | null> {
    const dbid = await this.options.plays.end(channel, new Date(this.now()).toISOString(), reason);
    if (dbid !== null) {
      this.options.logger.info(`play ${dbid} on channel ${JSON.stringify(channel)} ended (${reason})`);
      await this.announce([dbid]);
    }
    this.changed();
    return dbid;
  }

  /**
   * A listener the feeds learnt of late (a poll, or a listener_remove for a session never seen
   * open) was connected since `since`: the plays of its channel that ended after it are counted again.
   */
  async recount(channel: string, since: string): Promise<void> {
    if (this.closed) return;
    const marked = await this.options.plays.recountFrom(channel, since);
    if (marked > 0) void this.countEnded();
  }

  /** Tells the composition root which plays changed; its failure costs the refresh, never the play log. */
  private async announce(dbids: readonly number[]): Promise<void> {
    if (dbids.length === 0 || !this.options.onPlaysChanged) return;
    await this.options
      .onPlaysChanged(dbids)
      .catch((error: unknown) => this.options.logger.warn(`play log: current track not refreshed: ${errorMessage(error)}`));
  }

  /** The complement warnings for a play that just started (music only); logged and kept for /v1/status. */
  async complement(record: TrackRecord): Promise<string[]> {
    const play = record.play;
    if (!this.options.complement || !play || play.kind !== 'music') return [];
    const from = new Date(Date.parse(play.startedAt) - COMPLEMENT_WINDOW_MS).toISOString();
    const recent = [];
    for await (const page of this.options.plays.playPages({ from, to: `${play.startedAt}\uffff`, channel: play.channel })) {
      for (const row of page) if (row.play.kind === 'music' && row.dbid !== record.dbid) recent.push({ startedAt: row.play.startedAt, metadata: row.metadata });
    }
    const warnings = complementWarnings([...recent, { startedAt: play.startedAt, metadata: record.metadata }]);
    for (const warning of warnings) {
      this.options.logger.warn(`channel ${JSON.stringify(play.channel)}, dbid ${record.dbid}: ${warning}`);
      this.recent.push({ at: new Date(this.now()).toISOString(), channel: play.channel, dbid: record.dbid, warning });
      if (this.recent.length > KEPT_WARNINGS) this.recent.shift();
    }
    return warnings;
  }

  /** The latest complement warnings, those of the last 3 hours, newest last. */
  warnings(): StatusWarning[] {
    const since = new Date(this.now() - COMPLEMENT_WINDOW_MS).toISOString();
    return this.recent.filter((entry) => entry.at >= since);
  }

  /**
   * Counts every ended play not counted yet and resolves when that is done (a correction of air
   * times, pipeline/edit-track.ts): a counting under way may have read the plays before the change,
   * so it is waited for first, then one that starts after it.
   */
  async countNow(): Promise<void> {
    if (this.closed) return;
    await this.counting;
    await this.countEnded();
  }

  /** Waits for the counting under way; no timer fires after this. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.scheduling;
    await this.counting;
  }

  /** Plays may have ended or started: count what ended, and wait for the next planned end. */
  private changed(): void {
    if (this.closed) return;
    void this.countEnded();
    void this.scheduleOnce();
  }

  /**
   * One check of the planned ends at a time; the plays stored during it are checked once more
   * after it: a busy station's submissions cost one check per round trip, not one each.
   */
  private scheduleOnce(): Promise<void> {
    if (this.scheduling) {
      this.scheduleAgain = true;
      return this.scheduling;
    }
    this.scheduling = this.schedule()
      .catch((error: unknown) => this.options.logger.warn(`play log: planned ends not checked: ${errorMessage(error)}`))
      .finally(() => {
        this.scheduling = undefined;
        if (this.scheduleAgain && !this.closed) {
          this.scheduleAgain = false;
          void this.scheduleOnce();
        }
      });
    return this.scheduling;
  }

  private async schedule(): Promise<void> {
    const ended = await this.options.plays.endDue(new Date(this.now()).toISOString());
    if (ended.length > 0) {
      await this.announce(ended);
      void this.countEnded();
    }
    const next = await this.options.plays.nextPlannedEnd();
    clearTimeout(this.timer);
    this.timer = undefined;
    if (next === null || this.closed) return;
    const waitMs = Math.min(MAX_TIMER_MS, Math.max(0, Date.parse(next) - this.now()));
    this.timer = setTimeout(() => this.changed(), waitMs);
    this.timer.unref();
  }

  /** One counting at a time; a request during it runs it once more after. */
  private countEnded(): Promise<void> {
    if (this.counting) {
      this.countAgain = true;
      return this.counting;
    }
    this.counting = this.countAll()
      .catch((error: unknown) => this.options.logger.warn(`play log: listeners not counted yet: ${errorMessage(error)}`))
      .finally(() => {
        this.counting = undefined;
        if (this.countAgain && !this.closed) {
          this.countAgain = false;
          void this.countEnded();
        }
      });
    return this.counting;
  }

  private async countAll(): Promise<void> {
    const { plays, countsListeners, minSessionSeconds } = this.options;
    for (;;) {
      const ended = await plays.uncounted(COUNT_BATCH);
      for (const play of ended) {
        const listeners = countsListeners
          ? countListeners(play, await plays.overlapping(play.channel, play.startedAt, play.endedAt), minSessionSeconds, this.now())
          : null;
        await plays.setListeners(play.dbid, listeners);
      }
      await this.announce(ended.map((play) => play.dbid));
      if (ended.length < COUNT_BATCH) return;
    }
  }
}
