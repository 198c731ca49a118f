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

  it('When a busy service answered 503 or 429 with Retry-After, then it is paused that long, capped at the fixed pause', () => {
    const start = now;
    const health = new ServiceHealth(() => now, 180_000);
    health.failed('musicbrainz', new UpstreamError('musicbrainz', 'HTTP 503 after 3 attempt(s)', { status: 503, transient: true, retryAfterMs: 2_000 }));
    health.failed('coverartarchive', new UpstreamError('coverartarchive', 'HTTP 429', { status: 429, transient: true, retryAfterMs: 5_000 }));
    health.failed('wikidata', new UpstreamError('wikidata', 'HTTP 503', { status: 503, transient: true, retryAfterMs: 3_600_000 }));
    expect(() => health.check('musicbrainz')).toThrow(/skipped for 2 s more/);
    now = start + 2_000;
    expect(() => health.check('musicbrainz')).not.toThrow();
    expect(health.failing().sort()).toEqual(['coverartarchive', 'wikidata']);
    now = start + 5_000;
    expect(health.failing()).toEqual(['wikidata']);
    expect(() => health.check('wikidata')).toThrow(/skipped for 175 s more/);
    now = start + 180_000;
    expect(health.failing()).toEqual([]);
  });
});
