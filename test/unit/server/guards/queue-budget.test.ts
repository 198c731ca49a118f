import { QueueBudget } from '../../../../src/server/guards/queue-budget';

describe('QueueBudget (limits.maxQueuedBytes)', () => {
  it('When chunks fit, then they are admitted at once; past the budget they wait, first come first served', async () => {
    const budget = new QueueBudget(100);
    const admitted: string[] = [];
    await budget.reserve(60);
    const second = budget.reserve(60).then(() => admitted.push('second'));
    const third = budget.reserve(10).then(() => admitted.push('third'));
    await Promise.resolve();
    expect(admitted).toEqual([]);
    expect([budget.hasRoomFor(40), budget.hasRoomFor(41)]).toEqual([true, false]);
    budget.release(60);
    await Promise.all([second, third]);
    expect(admitted).toEqual(['second', 'third']);
    expect([budget.hasRoomFor(30), budget.hasRoomFor(31)]).toEqual([true, false]);
  });

  it('When one chunk is larger than the whole budget, then it still goes, alone', async () => {
    const budget = new QueueBudget(10);
    await budget.reserve(50);
    expect(budget.hasRoomFor(0)).toBe(false);
    let next = false;
    const waiting = budget.reserve(1).then(() => (next = true));
    await Promise.resolve();
    expect(next).toBe(false);
    budget.release(50);
    await waiting;
    expect([budget.hasRoomFor(9), budget.hasRoomFor(10)]).toEqual([true, false]);
  });
});
