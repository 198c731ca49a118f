import { EventEmitter } from 'node:events';
import { AuthThrottle } from '../../../../src/domain/auth-throttle';
import { throttleFailedAuthentication } from '../../../../src/server/middleware/auth-throttle';

// The HTTP API's door (docs/security.md "Guessing the secret") holds a guess until the turn the
// throttle gave it, on a fake clock (Jest's timers and Date): the secret is checked at the turn,
// not a moment before. The turns themselves: test/unit/domain/auth-throttle.test.ts.

const SECRET = 'the-right-one';

/** A request as the middleware reads it: an address, a secret header, a response that can close. */
function requestFrom(ip: string, secret: string) {
  return {
    ip,
    method: 'GET',
    query: {},
    state: {} as { wrongSecret?: boolean },
    status: 200,
    res: new EventEmitter(),
    get: (name: string) => (name === 'X-SVC-Client-Auth' ? secret : ''),
  };
}

describe('throttleFailedAuthentication', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('When an address gave a wrong secret, then its next guess is checked only once the 250 ms turn has come; another address at once', async () => {
    const door = throttleFailedAuthentication(SECRET, new AuthThrottle({ now: () => Date.now() }), () => undefined);
    const checked: string[] = [];
    const guess = async (ip: string, secret: string): Promise<void> => {
      const ctx = requestFrom(ip, secret);
      await door(ctx as never, () => {
        checked.push(`${ip} ${secret}`);
        ctx.state.wrongSecret = secret !== SECRET;
        return Promise.resolve();
      });
    };
    await guess('10.0.0.1', 'wrong-1');
    const second = guess('10.0.0.1', 'wrong-2');
    await guess('10.0.0.2', SECRET);
    await jest.advanceTimersByTimeAsync(249);
    expect(checked).toEqual(['10.0.0.1 wrong-1', `10.0.0.2 ${SECRET}`]);
    await jest.advanceTimersByTimeAsync(1);
    await second;
    expect(checked).toEqual(['10.0.0.1 wrong-1', `10.0.0.2 ${SECRET}`, '10.0.0.1 wrong-2']);
  });
});
