import type { QueueBudget } from '../../guards/queue-budget';
import { socketQueuedBytes, type QueuedBytes, type QueuedKind } from './outbox';

// limits.maxQueuedBytes for WebSocket sockets (docs/decisions.md "Hostile clients and browsers"):
// every socket's unsent bytes also count in the process-wide budget. A reader that already has
// bytes waiting and would push the process past the budget with another pushed frame is over
// its share: the Outbox closes it with 1013. Replies are never refused; they go one fragment at
// a time and count while they wait, so they shrink the room left for pushes.

export function budgetedQueuedBytes(maxPushBytes: number, budget: QueueBudget): QueuedBytes {
  return new BudgetedQueuedBytes(socketQueuedBytes(maxPushBytes), budget);
}

/** One object per socket rather than closures (docs/limits-and-load.md "What one client costs"). */
class BudgetedQueuedBytes implements QueuedBytes {
  // After release, write callbacks that still come in change nothing.
  private released = false;

  // What this socket holds in the budget is `own.total()`: no second count to keep in step.
  constructor(
    private readonly own: QueuedBytes,
    private readonly budget: QueueBudget,
  ) {}

  add(kind: QueuedKind, bytes: number): void {
    if (this.released) return;
    this.own.add(kind, bytes);
    this.budget.take(bytes);
  }

  remove(kind: QueuedKind, bytes: number): void {
    if (this.released) return;
    this.own.remove(kind, bytes);
    this.budget.release(bytes);
  }

  pushFits(bytes: number): boolean {
    return this.own.pushFits(bytes) && (this.own.total() === 0 || this.budget.hasRoomFor(bytes));
  }

  total(): number {
    return this.own.total();
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.release(this.own.total());
    this.own.release();
  }
}
