import { errorMessage } from '../../errors';
import type { OutputStore } from '../../store/outputs';
import type { Output } from '../output';
import type { Deliver } from './delivery';

// One output's own worker (docs/outputs.md "Delivery"): it claims the head of its queue and
// delivers it, or sleeps until woken, the head is due or the poll comes round. A slow or dead
// target holds up only its own queue. The store's claim supersedes, for a `latestOnly` output,
// every pending message but the newest.

export interface Worker {
  output: Output;
  wake: () => void;
  done: Promise<void>;
}

export interface WorkerDeps {
  store: Pick<OutputStore, 'claim'>;
  /** This dispatcher's claims (a lease): another instance's worker leaves them alone until they lapse. */
  owner: string;
  leaseMs: number;
  pollMs: number;
  now: () => number;
  stop: AbortSignal;
  /** Settles once the outputs' cursors were tried: no claim before. */
  ready: Promise<void>;
  deliver: Deliver;
  report: (kind: string, message: string) => void;
}

/** The shortest sleep before a due head is claimed again. */
const MIN_WAIT_MS = 10;

export function startWorker(output: Output, deps: WorkerDeps): Worker {
  const sleeper = wakeableSleep(deps.stop);
  return { output, wake: sleeper.wake, done: runWorker(output, deps, sleeper.pause) };
}

async function runWorker(output: Output, deps: WorkerDeps, pause: (ms: number) => Promise<void>): Promise<void> {
  await deps.ready;
  while (!deps.stop.aborted) {
    try {
      const answer = await deps.store.claim(output.name, { owner: deps.owner, now: deps.now(), leaseMs: deps.leaseMs, latestOnly: output.latestOnly });
      if (!answer) await pause(deps.pollMs);
      else if ('waitMs' in answer) await pause(Math.min(Math.max(answer.waitMs, MIN_WAIT_MS), deps.pollMs));
      else await deps.deliver(output, answer.message);
    } catch (error) {
      deps.report(`queue ${output.name}`, `output ${output.name}: delivery queue unavailable: ${errorMessage(error)}`);
      await pause(deps.pollMs);
    }
  }
}

/** A sleep that wake() ends early; a wake while awake makes the next sleep return at once. */
function wakeableSleep(stop: AbortSignal): { pause: (ms: number) => Promise<void>; wake: () => void } {
  let wakeUp: (() => void) | undefined;
  let woken = false;
  const wake = () => {
    woken = true;
    wakeUp?.();
  };
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken || stop.aborted) return resolve();
      const timer = setTimeout(resolve, ms);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      wakeUp = undefined;
      woken = false;
    });
  return { pause, wake };
}
