import { createHash } from 'node:crypto';
import { startFake, type FakeReply, type FakeServer } from './fake-server';

// Last.fm's API 2.0 endpoint for the two write methods svc calls, its rules taken from the
// community's copy of Last.fm's API documentation (github.com/lastfm-docs/api-docs) and Last.fm's
// method pages it mirrors:
// - docs/auth/signature.md: `api_sig` is the MD5 (UTF-8) of every parameter except `format`
//   (and `callback`), ordered by name, each as name then value, followed by the shared secret.
// - docs/codes.md: errors come as `{"error": <code>, "message": "..."}`: 3 invalid method,
//   6 missing or invalid parameter, 9 invalid session key, 10 invalid API key, 13 invalid method
//   signature, 29 rate limit exceeded (answered with HTTP 429).
// - track.updateNowPlaying and track.scrobble: POST, parameters artist, track (required), album,
//   duration, mbid; the scrobble also a `timestamp` (UNIX seconds, when the track started) and
//   `chosenByUser`; authenticated by api_key, sk and api_sig. A scrobble's answer counts the
//   accepted and ignored ones in `scrobbles["@attr"]`.

export interface LastFmCall {
  method: string;
  params: Record<string, string>;
  at: number;
}

export interface LastFmFake {
  server: FakeServer;
  url: string;
  apiKey: string;
  apiSecret: string;
  sessionKey: string;
  /** Calls that were signed right and accepted. */
  accepted: LastFmCall[];
  /** Every error code answered, in order. */
  errors: number[];
  /** The next call is answered with error 29 (HTTP 429). */
  rateLimitOnce(): void;
  close(): Promise<void>;
}

const REQUIRED: Readonly<Record<string, readonly string[]>> = {
  'track.updateNowPlaying': ['artist', 'track'],
  'track.scrobble': ['artist', 'track', 'timestamp'],
};

export async function startLastFmFake(): Promise<LastFmFake> {
  const apiKey = 'a'.repeat(32);
  const apiSecret = 'b'.repeat(32);
  const sessionKey = 'c'.repeat(32);
  const accepted: LastFmCall[] = [];
  const errors: number[] = [];
  let limitNext = false;
  const error = (code: number, message: string, status = 200): FakeReply => {
    errors.push(code);
    return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: code, message }) };
  };

  const server = await startFake('lastfm', (request) => {
    const params = request.query;
    if (request.method !== 'POST') return error(3, 'Invalid Method - write methods are POST', 405);
    if (limitNext) {
      limitNext = false;
      return error(29, 'Rate Limit Exceeded - Your IP has made too many requests in a short period', 429);
    }
    const required = REQUIRED[params.method ?? ''];
    if (!required) return error(3, 'Invalid Method - No method with that name in this package');
    if (params.api_key !== apiKey) return error(10, 'Invalid API key - You must be granted a valid key by last.fm', 403);
    if (params.api_sig !== signatureOf(params, apiSecret)) return error(13, 'Invalid method signature supplied', 403);
    if (params.sk !== sessionKey) return error(9, 'Invalid session key - Please re-authenticate', 403);
    const missing = required.find((name) => !params[name]);
    if (missing) return error(6, `Invalid parameters - Your request is missing a required parameter (${missing})`, 400);
    accepted.push({ method: params.method ?? '', params, at: request.at });
    const body =
      params.method === 'track.scrobble'
        ? {
            scrobbles: {
              scrobble: { artist: { '#text': params.artist }, track: { '#text': params.track }, ignoredMessage: { code: '0', '#text': '' } },
              '@attr': { accepted: 1, ignored: 0 },
            },
          }
        : { nowplaying: { artist: { '#text': params.artist }, track: { '#text': params.track }, ignoredMessage: { code: '0', '#text': '' } } };
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  });

  return {
    server,
    url: `${server.url}/2.0/`,
    apiKey,
    apiSecret,
    sessionKey,
    accepted,
    errors,
    rateLimitOnce() {
      limitNext = true;
    },
    close: () => server.close(),
  };
}

/** The fake's own reading of the signature rule (docs/auth/signature.md). */
function signatureOf(params: Readonly<Record<string, string>>, secret: string): string {
  const names = Object.keys(params)
    .filter((name) => name !== 'format' && name !== 'callback' && name !== 'api_sig')
    .sort();
  return createHash('md5')
    .update(names.map((name) => `${name}${params[name] ?? ''}`).join('') + secret, 'utf8')
    .digest('hex');
}
