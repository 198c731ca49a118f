import { UpstreamError } from '../../../src/enrich/http';
import { ServiceHealth } from '../../../src/enrich/service-health';

describe('ServiceHealth (negative cache of failing services)', () => {
  let now = 1_000_000;
  const health = new ServiceHealth(() => now, 180_000);

  it('When a service timed out, then it is skipped until the pause ends, and named as failing meanwhile', () => {
    health.failed('musicbrainz', new UpstreamError('musicbrainz', 'no answer within 5000 ms', { transient: true, noAnswer: true }));
    expect(() => health.check('musicbrainz')).toThrow(/skipped for 180 s more/);
    expect(health.failing()).toEqual(['musicbrainz']);
    now += 180_000;
    expect(() => health.check('musicbrainz')).not.toThrow();
    expect(health.failing()).toEqual([]);
  });

  it('When a service answered 5xx, then it is paused; a 404-like answer or a 429 or an unreadable answer is not', () => {
    health.failed('theaudiodb', new UpstreamError('theaudiodb', 'HTTP 502', { status: 502, transient: true }));
    health.failed('wikidata', new UpstreamError('wikidata', 'HTTP 429 after 3 attempt(s)', { status: 429, transient: true }));
    health.failed('fanarttv', new UpstreamError('fanarttv', 'malformed JSON in answer', { transient: true }));
    health.failed('acoustid', new Error('not an upstream error'));
    expect(health.failing()).toEqual(['theaudiodb']);
  });
});
