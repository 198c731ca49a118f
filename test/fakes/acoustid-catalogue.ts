import { pythonInt } from './artist-services';
import { acoustIdFingerprint, compareFingerprints } from './chromaprint';

// AcoustID's /v2/lookup as the recognition fake answers it (test/fakes/recognition-services.ts):
// tracks registered with their raw fingerprints (`fpcalc -raw -length 0`) and MusicBrainz
// recording metadata; a lookup's compressed fingerprint decoded (test/fakes/chromaprint.ts) and
// matched against them. From acoustid/acoustid-server @ 376a8237:
// - acoustid/api/v2/__init__.py: parameters from the query string and the form alike
//   (`req.values`), checked in this order: `format` json/jsonp/xml (1 'unknown format "x"');
//   `client` (2 'missing required parameter "client"', 4 "invalid API key"); `meta` split on
//   whitespace; `maxdurationdiff` 1..30 (11); a `fingerprint` (or `trackid`) at all (2);
//   `duration` a non-zero integer (else 2 'missing required parameter "duration"'); the
//   fingerprint not empty (2) and decodable (3 "invalid fingerprint"). Only then the rate limit
//   (APIHandler._rate_limit: 429, 14 "rate limit (%f requests per second) exceeded, try again
//   later"). An answer is {"status": "ok", "results": [{"id", "score", "recordings"}]}: one
//   result per track (_inject_results), recordings with meta=recordings (inject_recordings,
//   extract_recording: id, title, duration, artists [{id, name, joinphrase}]), only ids with
//   meta=recordingids. Errors: {"status": "error", "error": {"code", "message"}}, HTTP 400
//   unless the error says otherwise (acoustid/api/errors.py: TooManyRequests 429).
// - acoustid/data/fingerprint.py FingerprintSearcher: a stored fingerprint is a candidate when
//   its length is within maxdurationdiff seconds (default const.py FINGERPRINT_MAX_LENGTH_DIFF =
//   7) of `duration`, and a result when its acoustid_compare2 score (offset up to const.py
//   TRACK_MAX_OFFSET = 80 items) is above const.py TRACK_GROUP_MERGE_THRESHOLD = 0.4; best first,
//   at most MAX_RESULTS_PER_FINGERPRINT_QUERY = 10. So AcoustID matches whole tracks: a sample
//   much shorter than its track finds nothing, however well it matches.
// - acoustid/ratelimiter.py: requests are counted in 5 s steps over the last 20 s; one more than
//   rate * 20 is refused, and a refused request is not counted. The webservice documentation
//   (https://acoustid.org/webservice) asks for at most 3 requests per second, the fake's default;
//   the server's own defaults are 4 per IP (const.py MAX_REQUESTS_PER_SECOND) and 10 per
//   application (v2 DEFAULT_APPLICATION_RATE_LIMIT).
// Not faked: batch lookups, trackid lookups, meta other than recordings/recordingids, XML.

export interface AcoustIdTrack {
  /** The AcoustID track id (a UUID). */
  id: string;
  /** `fpcalc -raw` items of the whole file. */
  fingerprint: Uint32Array;
  /** The file's length in seconds. */
  seconds: number;
  recording: { id: string; title: string; artists: { id: string; name: string; joinphrase?: string }[] };
}

const FORMATS = new Set(['json', 'jsonp', 'xml']);
const MAX_ALLOWED_LENGTH_DIFF = 30;
const MAX_LENGTH_DIFF = 7;
const MAX_OFFSET = 80;
const MIN_SCORE = 0.4;
const MAX_RESULTS = 10;
const INTERVAL_S = 20;
const STEPS = 4;
/** https://acoustid.org/webservice: "do not make more than 3 requests per second". */
export const ACOUSTID_DOCUMENTED_RATE = 3;

/** acoustid/ratelimiter.py's counting, on a clock the test hands in (ms). */
export class AcoustIdRateLimiter {
  private readonly counts = new Map<number, number>();

  constructor(
    readonly rate: number,
    private readonly now: () => number,
  ) {}

  /** Counts the request; true when it is one too many (and then it does not count). */
  limit(): boolean {
    const step = Math.floor((STEPS * this.now()) / 1000 / INTERVAL_S);
    this.counts.set(step, (this.counts.get(step) ?? 0) + 1);
    for (const old of this.counts.keys()) if (old <= step - STEPS) this.counts.delete(old);
    let count = 0;
    for (let i = 0; i < STEPS; i += 1) count += this.counts.get(step - i) ?? 0;
    if (count <= this.rate * INTERVAL_S) return false;
    this.counts.set(step, (this.counts.get(step) ?? 1) - 1);
    return true;
  }
}

export interface AcoustIdReply {
  status: number;
  body: { status: 'ok'; results: unknown[] } | { status: 'error'; error: { code: number; message: string } };
  /** The best result's recording title, for the fake's log of answers. */
  title?: string;
}

type Params = (name: string) => string | null;

/** The checks before the search, in the server's order: an error reply, or the query. */
function parse(get: Params, client: string): AcoustIdReply | { meta: string[]; maxDiff: number; duration: number; items: Uint32Array } {
  const error = (code: number, message: string): AcoustIdReply => ({ status: 400, body: { status: 'error', error: { code, message } } });
  const format = get('format');
  if (format !== null && !FORMATS.has(format)) return error(1, `unknown format "${format}"`);
  if (!get('client')) return error(2, 'missing required parameter "client"');
  if (get('client') !== client) return error(4, 'invalid API key');
  const meta = (get('meta') ?? '').split(/\s+/).filter((word) => word !== '');
  const diff = get('maxdurationdiff');
  const maxDiff = diff === null ? MAX_LENGTH_DIFF : pythonInt(diff);
  if (maxDiff !== undefined && (maxDiff < 1 || maxDiff > MAX_ALLOWED_LENGTH_DIFF))
    return error(11, `parameter "maxdurationdiff" must be between 1 and ${MAX_ALLOWED_LENGTH_DIFF}`);
  if (get('fingerprint') === null && get('trackid') === null) return error(2, 'missing required parameter "fingerprint"');
  const duration = pythonInt(get('duration') ?? undefined) ?? 0;
  if (duration === 0) return error(2, 'missing required parameter "duration"');
  const fingerprint = get('fingerprint') ?? '';
  if (fingerprint === '') return error(2, 'missing required parameter "fingerprint"');
  const items = acoustIdFingerprint(fingerprint);
  if (!items) return error(3, 'invalid fingerprint');
  return { meta, maxDiff: maxDiff ?? MAX_LENGTH_DIFF, duration, items };
}

/** One lookup: the query string's and the form's parameters (the query's first, as `req.values`). */
export function acoustIdLookup(
  tracks: readonly AcoustIdTrack[],
  client: string,
  limiter: AcoustIdRateLimiter,
  failing: () => 'limit' | null,
): (query: URLSearchParams, form: URLSearchParams) => AcoustIdReply {
  return (query, form) => {
    const parsed = parse((name) => query.get(name) ?? form.get(name), client);
    if ('status' in parsed) return parsed;
    if (failing() === 'limit' || limiter.limit()) {
      const message = `rate limit (${limiter.rate.toFixed(6)} requests per second) exceeded, try again later`;
      return { status: 429, body: { status: 'error', error: { code: 14, message } } };
    }
    const matches = tracks
      .filter((track) => Math.abs(track.seconds - parsed.duration) <= parsed.maxDiff)
      .map((track) => ({ track, score: compareFingerprints(track.fingerprint, parsed.items, MAX_OFFSET) }))
      .filter((match) => match.score > MIN_SCORE)
      .sort((a, b) => b.score - a.score)
      .slice(0, MAX_RESULTS);
    // meta=recordingids (alone or with recordings) gives the recordings' ids only.
    const withIds = parsed.meta.includes('recordingids');
    const withRecordings = parsed.meta.includes('recordings') || withIds;
    const results = matches.map(({ track, score }) => ({
      id: track.id,
      score: Math.round(score * 10_000) / 10_000,
      ...(withRecordings ? { recordings: [withIds ? { id: track.recording.id } : { ...track.recording, duration: track.seconds }] } : {}),
    }));
    const title = matches[0]?.track.recording.title;
    return { status: 200, body: { status: 'ok', results }, ...(title !== undefined ? { title } : {}) };
  };
}
