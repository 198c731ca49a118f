import { icecastReason, withIcecastReason } from '../../../src/outputs/icecast';

// Icecast's answers (docs/outputs.md "icecast and shoutcast"): the error page of the real icecast2
// 2.4.4 (an admin request for a mount without a source), read here as text.

const NO_SOURCE = '<html><head><title>Error 400</title></head><body><b>400 - Source does not exist</b></body></html>\r\n';

describe('Icecast answers', () => {
  it('When a mount has no source yet (400 "Source does not exist"), then the title is retried, with Icecast\'s reason', () => {
    expect(icecastReason(NO_SOURCE)).toBe('Source does not exist');
    expect(withIcecastReason({ outcome: 'failed', status: 400, error: 'HTTP 400' }, NO_SOURCE)).toEqual({
      outcome: 'retry',
      status: 400,
      error: 'HTTP 400: Source does not exist',
    });
  });

  it('When Icecast refuses for another reason, then it fails at once and its reason is kept; a success stays one', () => {
    const page = '<html><head><title>Error 401</title></head><body><b>401 - You need to authenticate</b></body></html>';
    expect(withIcecastReason({ outcome: 'failed', status: 401, error: 'HTTP 401' }, page)).toEqual({
      outcome: 'failed',
      status: 401,
      error: 'HTTP 401: You need to authenticate',
    });
    expect(withIcecastReason({ outcome: 'failed', status: 400, error: 'HTTP 400' }, '')).toEqual({ outcome: 'failed', status: 400, error: 'HTTP 400' });
    expect(withIcecastReason({ outcome: 'delivered', status: 200 }, NO_SOURCE)).toEqual({ outcome: 'delivered', status: 200 });
    expect(icecastReason(`<b>${'x'.repeat(500)}</b>`)).toHaveLength(200);
  });
});
