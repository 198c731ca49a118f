import { createHash } from 'node:crypto';
import { sendHttp } from './http-send';
import { redactedTarget, type Delivery, type Output } from './output';
import type { Play } from './scrobble';
import { RequestSpacing, createScrobblerOutput, type RecordLookup, type ScrobbleService, type SpacingClock } from './scrobbler';

// `lastfm` (docs/outputs.md "lastfm"): the station's plays as Last.fm's API 2.0 takes them:
// `track.updateNowPlaying` when a track starts and `track.scrobble` once it counts
// (scrobbler.ts), each a signed POST: `api_sig` is the MD5 of every parameter but `format`,
// ordered by name, as `name` + `value`, then the shared secret. Last.fm answers errors in the
// body, often with HTTP 200: 29 is its rate limit, 11 and 16 pass by themselves, the rest are
// the configuration's (a wrong key, session or signature) and fail at once.

export interface LastFmConfig {
  name: string;
  apiKey: string;
  apiSecret: string;
  sessionKey: string;
  /** API endpoint, default https://ws.audioscrobbler.com/2.0/ */
  url?: string;
}

const DEFAULT_ENDPOINT = 'https://ws.audioscrobbler.com/2.0/';
/** Last.fm asks for no more than a few calls a second from one client. */
const CALL_GAP_MS = 250;
/** Error 29 names no wait: a minute, then the usual backoff. */
const RATE_LIMIT_WAIT_MS = 60_000;
const RETRYABLE_ERRORS = new Set([2, 8, 11, 16]);

/** `clock`: the calls' spacing and the service's waits (tests see the waits instead of taking them). */
export function createLastFmOutput(config: LastFmConfig, lookup?: RecordLookup, clock?: SpacingClock): Output {
  const endpoint = config.url ?? DEFAULT_ENDPOINT;
  const spacing = new RequestSpacing(CALL_GAP_MS, clock);

  async function call(method: string, params: Record<string, string>, signal: AbortSignal): Promise<Delivery> {
    const wait = await spacing.turn(signal);
    if (wait !== undefined) return { outcome: 'retry', error: 'waiting for the rate limit', retryAfterMs: wait };
    const signed = { ...params, method, api_key: config.apiKey, sk: config.sessionKey };
    const body = new URLSearchParams({ ...signed, api_sig: lastFmSignature(signed, config.apiSecret), format: 'json' }).toString();
    const answer = await sendHttp(endpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }, signal);
    spacing.answered();
    const refusal = lastFmError(answer.body);
    if (refusal) return refusalDelivery(refusal, answer.delivery.status);
    if (answer.delivery.outcome !== 'delivered') return answer.delivery;
    return { ...answer.delivery, receipt: method === 'track.scrobble' ? scrobbleReceipt(answer.body) : 'now playing' };
  }

  const service: ScrobbleService = {
    nowPlaying: (play, signal) => call('track.updateNowPlaying', trackParams(play), signal),
    // chosenByUser=0: the station chose the track, not a listener.
    scrobble: (play, signal) =>
      call('track.scrobble', { ...trackParams(play), timestamp: String(Math.floor(play.startedAtMs / 1000)), chosenByUser: '0' }, signal),
  };
  return createScrobblerOutput({ name: config.name, type: 'lastfm', target: redactedTarget(endpoint, true), service, ...(lookup ? { lookup } : {}) });
}

/** MD5 over the parameters (not `format` or `callback`) ordered by name, each name then value, then the secret. */
export function lastFmSignature(params: Readonly<Record<string, string>>, secret: string): string {
  const text = Object.keys(params)
    .filter((name) => name !== 'format' && name !== 'callback')
    .sort()
    .map((name) => `${name}${params[name] ?? ''}`)
    .join('');
  return createHash('md5').update(`${text}${secret}`, 'utf8').digest('hex');
}

function trackParams(play: Play): Record<string, string> {
  const params: Record<string, string> = { artist: play.artist, track: play.title };
  if (play.album) params.album = play.album;
  if (play.durationSeconds !== undefined) params.duration = String(Math.round(play.durationSeconds));
  if (play.recordingMbid) params.mbid = play.recordingMbid;
  return params;
}

function lastFmError(body: string): { code: number; message: string } | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown };
    if (typeof parsed.error !== 'number') return undefined;
    return { code: parsed.error, message: typeof parsed.message === 'string' ? parsed.message.slice(0, 200) : '' };
  } catch {
    return undefined;
  }
}

/** Error 29 holds the message (and those behind it, in order) a minute; 2, 8, 11 and 16 retry as usual; the rest fail. */
function refusalDelivery(refusal: { code: number; message: string }, status: number | undefined): Delivery {
  const error = `Last.fm error ${refusal.code}${refusal.message ? `: ${refusal.message}` : ''}`;
  const withStatus = status === undefined ? {} : { status };
  if (refusal.code === 29) return { outcome: 'retry', ...withStatus, error, retryAfterMs: RATE_LIMIT_WAIT_MS };
  if (RETRYABLE_ERRORS.has(refusal.code)) return { outcome: 'retry', ...withStatus, error };
  return { outcome: 'failed', ...withStatus, error };
}

/** `accepted 1` or why Last.fm ignored it (`ignoredMessage`, e.g. a timestamp too old). */
function scrobbleReceipt(body: string): string {
  try {
    const parsed = JSON.parse(body) as {
      scrobbles?: { '@attr'?: { accepted?: unknown }; scrobble?: { ignoredMessage?: { code?: unknown; '#text'?: unknown } } };
    };
    const ignored = parsed.scrobbles?.scrobble?.ignoredMessage;
    if (ignored && String(ignored.code) !== '0')
      return `ignored by Last.fm (code ${String(ignored.code)}${typeof ignored['#text'] === 'string' && ignored['#text'] ? `: ${ignored['#text']}` : ''})`;
    const accepted = parsed.scrobbles?.['@attr']?.accepted;
    return `accepted ${typeof accepted === 'number' || typeof accepted === 'string' ? accepted : '?'}`;
  } catch {
    return 'accepted';
  }
}
