import { createFanOut } from '../../../../src/server/streams/fan-out';

// Deliveries to local viewers run after the current turn, a slice of time per turn, in the order asked.

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const turns = async (count: number) => {
  for (let i = 0; i < count; i += 1) await nextTurn();
};

/** A clock that moves only when a delivery says it took time. */
function steppedClock() {
  let at = 0;
  return { now: () => at, spend: (ms: number) => (at += ms) };
}

describe('fan-out to local viewers', () => {
  it('When a change is sent to many recipients, then nothing is delivered in the same turn, and then one slice of time per turn', async () => {
    const clock = steppedClock();
    const fanOut = createFanOut<number>({ sliceMs: 1, now: clock.now });
    const got: number[] = [];
    fanOut.send(
      Array.from({ length: 10 }, (_, i) => i),
      (n) => {
        clock.spend(0.25);
        got.push(n);
      },
    );
    expect(got).toHaveLength(0);
    await nextTurn();
    expect(got).toHaveLength(4);
    await nextTurn();
    expect(got).toHaveLength(8);
    await nextTurn();
    expect(got).toEqual(Array.from({ length: 10 }, (_, i) => i));
    // Nothing was left over for a later turn.
    await nextTurn();
    expect(got).toHaveLength(10);
  });

  it('When one delivery takes longer than a slice, then it still goes, alone in its turn', async () => {
    const clock = steppedClock();
    const fanOut = createFanOut<number>({ sliceMs: 1, now: clock.now });
    const got: number[] = [];
    fanOut.send([1, 2, 3], (n) => {
      clock.spend(5);
      got.push(n);
    });
    await nextTurn();
    expect(got).toEqual([1]);
    await turns(2);
    expect(got).toEqual([1, 2, 3]);
  });

  it('When two changes follow each other, then every recipient gets them in order, and a recipient added after a change gets only the later one', async () => {
    const clock = steppedClock();
    const fanOut = createFanOut<string>({ sliceMs: 1, now: clock.now });
    const frames = new Map<string, string[]>();
    const viewers = new Set(['a', 'b', 'c', 'd', 'e']);
    const deliver = (frame: string) => (viewer: string) => {
      clock.spend(0.4);
      frames.set(viewer, [...(frames.get(viewer) ?? []), frame]);
    };
    fanOut.send(viewers, deliver('first'));
    viewers.add('late');
    viewers.delete('a');
    fanOut.send(viewers, deliver('second'));
    // 10 deliveries, 3 per turn (a slice crosses from one change to the next).
    await nextTurn();
    expect([...frames.values()].flat()).toHaveLength(3);
    await turns(3);
    expect(frames.get('a')).toEqual(['first']);
    for (const viewer of ['b', 'c', 'd', 'e']) expect(frames.get(viewer)).toEqual(['first', 'second']);
    expect(frames.get('late')).toEqual(['second']);
  });

  it('When one delivery throws, then the others still get theirs', async () => {
    const fanOut = createFanOut<number>();
    const got: number[] = [];
    fanOut.send([1, 2, 3, 4], (n) => {
      if (n === 2) throw new Error('socket closed under it');
      got.push(n);
    });
    await turns(4);
    expect(got).toEqual([1, 3, 4]);
  });
});
