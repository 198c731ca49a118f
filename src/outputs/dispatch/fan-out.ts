import { errorMessage } from '../../errors';
import type { MessageOf, OutputEvent, OutputStore } from '../../store/outputs';

// The fan-out (docs/outputs.md "Delivery"): a record event is recorded once, one row for every
// output, and the recorded changes are then moved into each output's queue in dbid order, one
// run at a time (a request during a run makes it go round again), waking the outputs that got
// messages.

export interface FanOutDeps {
  store: Pick<OutputStore, 'startCursors' | 'record' | 'expand'>;
  /** The outputs' names. */
  names: readonly string[];
  messageOf: MessageOf;
  /** Wakes the worker of an output that got messages. */
  wake: (name: string) => void;
  now: () => number;
  stop: AbortSignal;
  report: (kind: string, message: string) => void;
}

export class ChangeFanOut {
  /** The cursors exist: no change is recorded before, so a new output misses none of ours. */
  readonly ready: Promise<void>;
  private cursorsStarted = false;
  private expansion: { running: Promise<void>; again: boolean } | undefined;

  constructor(private readonly deps: FanOutDeps) {
    this.ready = this.startCursors();
  }

  /** Records the event once for every output (one row); settles when the store has it (never rejects). */
  async record(event: OutputEvent, dbid: number, payload: string): Promise<void> {
    if (this.deps.names.length === 0) return;
    await this.ready;
    try {
      await this.deps.store.record({ event, dbid, payload, createdAt: this.deps.now() });
      // After the submission's answer has been written: nothing goes ahead of it.
      setImmediate(() => this.expandSoon());
    } catch (error) {
      this.deps.report('record', `outputs: track ${dbid} not queued: ${errorMessage(error)}`);
    }
  }

  /** Moves recorded changes into the queues and wakes the outputs that got messages; one run at a time. */
  expandSoon(): void {
    if (this.deps.stop.aborted || this.deps.names.length === 0) return;
    if (this.expansion) this.expansion.again = true;
    else {
      const expansion = (this.expansion = { again: false, running: Promise.resolve() });
      expansion.running = this.expand(expansion);
    }
  }

  /** Settles when the run under way, if any, has ended. */
  drained(): Promise<void> {
    return this.expansion?.running ?? Promise.resolve();
  }

  private async expand(expansion: { again: boolean }): Promise<void> {
    await this.ready;
    await this.startCursors();
    try {
      let more = true;
      while (more && !this.deps.stop.aborted) {
        expansion.again = false;
        const answer = await this.deps.store.expand(this.deps.names, this.deps.messageOf);
        answer.added.forEach((name) => this.deps.wake(name));
        more = answer.more || expansion.again;
      }
    } catch (error) {
      this.deps.report('expand', `outputs: changes not queued yet: ${errorMessage(error)}`);
    } finally {
      // In the same turn as the last answer: a request after it starts a new run.
      this.expansion = undefined;
    }
  }

  /** Never rejects: with the database down at start, each expansion tries again (a new output may then miss what came before). */
  private async startCursors(): Promise<void> {
    if (this.cursorsStarted || this.deps.names.length === 0) return;
    try {
      await this.deps.store.startCursors(this.deps.names);
      this.cursorsStarted = true;
    } catch (error) {
      this.deps.report('cursors', `outputs: delivery queue unavailable: ${errorMessage(error)}`);
    }
  }
}
