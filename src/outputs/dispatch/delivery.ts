import { errorMessage } from '../../errors';
import type { Logger } from '../../log';
import type { CounterPort } from '../../metrics';
import { deadlineSignal } from '../../signals';
import type { OutputMessage, OutputStore } from '../../store/outputs';
import { HTTP_TIMEOUT_MS } from '../http-send';
import type { Delivery, Output } from '../output';
import { settle, type RetryRules } from './settle';

// One attempt to send a message, and what the queue keeps of it (docs/outputs.md "Delivery").

/** Sends once within HTTP_TIMEOUT_MS; a type's own bug or an unreadable cover is a failed attempt, never thrown on. */
export async function attempt(output: Output, message: OutputMessage, stop: AbortSignal): Promise<Delivery> {
  const deadline = deadlineSignal(HTTP_TIMEOUT_MS, [stop]);
  try {
    return await output.send(message, deadline.signal);
  } catch (error) {
    return { outcome: 'retry', error: `unexpected: ${errorMessage(error)}` };
  } finally {
    deadline.dispose();
  }
}

export interface DelivererDeps {
  store: Pick<OutputStore, 'finish'>;
  logger: Logger;
  /** Counts each attempt's outcome per output (docs/running.md "Metrics"). */
  attempts: CounterPort;
  now: () => number;
  stop: AbortSignal;
  /** The retry rules of an output, by name. */
  rulesOf: (output: string) => RetryRules;
}

export type Deliver = (output: Output, message: OutputMessage) => Promise<void>;

/** Delivers a claimed message: one attempt, counted, and its outcome recorded (the claim released). */
export function deliverer(deps: DelivererDeps): Deliver {
  return async (output, message) => {
    const started = deps.now();
    const delivery = await attempt(output, message, deps.stop);
    const at = deps.now();
    deps.attempts.inc({ output: output.name, outcome: delivery.outcome === 'delivered' ? 'delivered' : 'failed' });
    const { result, log } = settle(output.name, message, delivery, { started, at }, deps.rulesOf(output.name));
    await deps.store.finish(message.id, result);
    if (log?.level === 'info') deps.logger.info(log.text);
    else if (log) deps.logger.warn(log.text);
  };
}
