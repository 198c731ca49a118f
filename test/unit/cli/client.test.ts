import { describeNetworkError } from '../../../src/cli/client';

describe('describeNetworkError', () => {
  test('When fetch wraps a refused connection, then it says "connection refused"', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(describeNetworkError(new TypeError('fetch failed', { cause }))).toBe('connection refused');
  });
});
