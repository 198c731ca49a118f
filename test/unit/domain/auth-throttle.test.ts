import { AuthThrottle } from '../../../src/domain/auth-throttle';

// Failed authentication per address (docs/security.md "Guessing the secret"), on a given clock.

describe('AuthThrottle', () => {
  let now = 0;
  const throttle = () => new AuthThrottle({ now: () => now });
  beforeEach(() => (now = 1_000_000));

  it('When an address has no failures, then it never waits', () => {
    const gate = throttle();
    expect([1, 2, 3].map(() => gate.turn('a'))).toEqual([{ waitMs: 0 }, { waitMs: 0 }, { waitMs: 0 }]);
  });

  it('When failures come one after another, then the wait doubles from 0.25 s up to 30 s', () => {
    const gate = throttle();
    const waits: number[] = [];
    for (let failure = 0; failure < 10; failure++) {
      const turn = gate.turn('a');
      if (!('waitMs' in turn)) throw new Error('refused');
      now += turn.waitMs;
      waits.push(turn.waitMs);
      gate.failed('a');
    }
    expect(waits).toEqual([0, 250, 500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
  });

  it('When guesses come at once, then they take turns one delay apart; a turn over a minute away is refused', () => {
    const gate = throttle();
    gate.failed('a');
    const turns = Array.from({ length: 5 }, () => gate.turn('a'));
    expect(turns).toEqual([{ waitMs: 250 }, { waitMs: 500 }, { waitMs: 750 }, { waitMs: 1000 }, { waitMs: 1250 }]);
    for (let failure = 0; failure < 9; failure++) gate.failed('b');
    const flood = Array.from({ length: 4 }, () => gate.turn('b'));
    expect(flood.filter((turn) => 'refusedForMs' in turn)).toHaveLength(2);
  });

  it('When the right secret comes, or 15 minutes pass, then the address is trusted again; other addresses never wait', () => {
    const gate = throttle();
    gate.failed('a');
    gate.failed('a');
    expect(gate.turn('other')).toEqual({ waitMs: 0 });
    gate.succeeded('a');
    expect(gate.turn('a')).toEqual({ waitMs: 0 });
    gate.failed('b');
    now += 15 * 60_000 + 1;
    expect(gate.turn('b')).toEqual({ waitMs: 0 });
  });
});
