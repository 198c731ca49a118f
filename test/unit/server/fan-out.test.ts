import { createFanOut } from '../../../src/server/fan-out';

// Deliveries to local viewers run after the current turn, a slice per turn, in the order asked.

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const turns = async (count: number) => {
  for (let i = 0; i < count; i += 1) await nextTurn();
};

describe('fan-out to local viewers', () => {
  it('When a change is sent to many recipients, then nothing is delivered in the same turn, and then one slice per turn', async () => {
    const fanOut = createFanOut<number>(100);
    const got: number[] = [];
    fanOut.send(
      Array.from({ length: 250 }, (_, i) => i),
      (n) => got.push(n),
    );
    expect(got).toHaveLength(0);
    await nextTurn();
    expect(got).toHaveLength(100);
    await nextTurn();
    expect(got).toHaveLength(200);
    await nextTurn();
    expect(got).toEqual(Array.from({ length: 250 }, (_, i) => i));
    // Nothing was left over for a later turn.
    await nextTurn();
    expect(got).toHaveLength(250);
  });

  it('When two changes follow each other, then every recipient gets them in order, and a recipient added after a change gets only the later one', async () => {
    const fanOut = createFanOut<string>(3);
    const frames = new Map<string, string[]>();
    const viewers = new Set(['a', 'b', 'c', 'd', 'e']);
    const deliver = (frame: string) => (viewer: string) => frames.set(viewer, [...(frames.get(viewer) ?? []), frame]);
    fanOut.send(viewers, deliver('first'));
    viewers.add('late');
    viewers.delete('a');
    fanOut.send(viewers, deliver('second'));
    // 10 deliveries, 3 per turn.
    await turns(4);
    expect(frames.get('a')).toEqual(['first']);
    for (const viewer of ['b', 'c', 'd', 'e']) expect(frames.get(viewer)).toEqual(['first', 'second']);
    expect(frames.get('late')).toEqual(['second']);
  });

  it('When one delivery throws, then the others still get theirs', async () => {
    const fanOut = createFanOut<number>(2);
    const got: number[] = [];
    fanOut.send([1, 2, 3, 4], (n) => {
      if (n === 2) throw new Error('socket closed under it');
      got.push(n);
    });
    // 4 deliveries, 2 per turn.
    await turns(2);
    expect(got).toEqual([1, 3, 4]);
  });
});
