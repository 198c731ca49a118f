import { BoundedMap } from '../../../src/domain/bounded-map';

const keysOf = <V>(map: BoundedMap<string, V>, candidates: string[]) => candidates.filter((key) => map.has(key));

describe('BoundedMap', () => {
  it('When a new key goes past maxEntries, then the first key set is forgotten', () => {
    const map = new BoundedMap<string, number>({ maxEntries: 2 });
    map.set('a', 1).set('b', 2).set('c', 3);
    expect(keysOf(map, ['a', 'b', 'c'])).toEqual(['b', 'c']);
    expect(map.get('c')).toBe(3);
    expect(map.get('a')).toBeUndefined();
  });

  it('When keys are read or set again in insertion order, then they keep their place', () => {
    const map = new BoundedMap<string, number>({ maxEntries: 2 });
    map.set('a', 1).set('b', 2);
    expect(map.get('a')).toBe(1);
    map.set('a', 10);
    map.set('c', 3);
    expect(keysOf(map, ['a', 'b', 'c'])).toEqual(['b', 'c']);
  });

  it('When keys are read or set again in use order, then the least recently used is forgotten', () => {
    const read = new BoundedMap<string, number>({ maxEntries: 2, order: 'use' });
    read.set('a', 1).set('b', 2);
    read.get('a');
    read.set('c', 3);
    expect(keysOf(read, ['a', 'b', 'c'])).toEqual(['a', 'c']);

    const written = new BoundedMap<string, number>({ maxEntries: 2, order: 'use' });
    written.set('a', 1).set('b', 2).set('a', 10).set('c', 3);
    expect(keysOf(written, ['a', 'b', 'c'])).toEqual(['a', 'c']);
    expect(written.get('a')).toBe(10);
  });

  it('When the newest entry is read again and again in use order, then the least recently used is still the one forgotten', () => {
    const map = new BoundedMap<string, number>({ maxEntries: 3, order: 'use' });
    map.set('a', 1).set('b', 2).set('c', 3);
    for (let i = 0; i < 5; i += 1) expect(map.get('c')).toBe(3);
    map.get('a');
    map.get('a');
    map.set('d', 4);
    expect(keysOf(map, ['a', 'b', 'c', 'd'])).toEqual(['a', 'c', 'd']);
    map.get('c');
    map.set('e', 5);
    expect(keysOf(map, ['a', 'c', 'd', 'e'])).toEqual(['c', 'd', 'e']);
  });

  it('When the total weight goes past maxWeight, then the oldest go until it fits, counting a replaced value at its new weight', () => {
    const map = new BoundedMap<string, Buffer>({ maxWeight: 10, weigh: (bytes) => bytes.length, order: 'use' });
    map.set('a', Buffer.alloc(4)).set('b', Buffer.alloc(4));
    expect(keysOf(map, ['a', 'b'])).toEqual(['a', 'b']);
    map.set('c', Buffer.alloc(5));
    expect(keysOf(map, ['a', 'b', 'c'])).toEqual(['b', 'c']);
    // b shrinks to 1 (6 held), so 4 more fit; had its old weight stayed counted (13), c would go.
    map.set('b', Buffer.alloc(1)).set('d', Buffer.alloc(4));
    expect(keysOf(map, ['b', 'c', 'd'])).toEqual(['b', 'c', 'd']);
  });

  it('When the entry just set alone weighs more than maxWeight, then it stays and every other goes', () => {
    const map = new BoundedMap<string, number>({ maxWeight: 10, weigh: (size) => size });
    map.set('a', 3).set('b', 3).set('big', 20);
    expect(keysOf(map, ['a', 'b', 'big'])).toEqual(['big']);
    // Once a lighter entry comes, the heavy one is the oldest and goes.
    map.set('c', 3);
    expect(keysOf(map, ['big', 'c'])).toEqual(['c']);
  });

  it('When the oldest entry is set again in insertion order past a bound, then it stays and a newer one goes', () => {
    const map = new BoundedMap<string, number>({ maxWeight: 10, weigh: (size) => size });
    map.set('a', 2).set('b', 4).set('c', 4);
    map.set('a', 5);
    expect(keysOf(map, ['a', 'b', 'c'])).toEqual(['a', 'c']);
    expect(map.get('a')).toBe(5);
  });
});
