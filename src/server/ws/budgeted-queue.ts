import type { QueueBudget } from '../queue-budget';
import { socketQueuedBytes, type QueuedBytes } from './outbox';

// limits.maxQueuedBytes for WebSocket sockets (docs/decisions.md "Hostile clients and browsers"):
// every socket's unsent bytes also count in the process-wide budget. A reader that already has
// bytes waiting and would push the process past the budget with another pushed frame is over
// its share: the Outbox closes it with 1013. Replies are never refused; they go one fragment at
// a time and count while they wait, so they shrink the room left for pushes.

export function budgetedQueuedBytes(maxPushBytes: number, budget: QueueBudget): QueuedBytes {
  const own = socketQueuedBytes(maxPushBytes);
  // What this socket holds in the budget is `own.total()`: no second count to keep in step.
  // After release, write callbacks that still come in change nothing.
  let released = false;
  return {
    add(kind, bytes) {
      if (released) return;
      own.add(kind, bytes);
      budget.take(bytes);
    },
    remove(kind, bytes) {
      if (released) return;
      own.remove(kind, bytes);
      budget.release(bytes);
    },
    pushFits: (bytes) => own.pushFits(bytes) && (own.total() === 0 || budget.hasRoomFor(bytes)),
    total: () => own.total(),
    release() {
      if (released) return;
      released = true;
      budget.release(own.total());
      own.release();
    },
  };
}
