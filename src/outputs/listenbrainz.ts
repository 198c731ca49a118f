import type http from 'node:http';
import { VERSION } from '../version';
import { sendHttp } from './http-send';
import { redactedTarget, type Delivery, type Output } from './output';
import type { Play } from './scrobble';
import { RequestSpacing, createScrobblerOutput, type RecordLookup, type ScrobbleService, type SpacingClock } from './scrobbler';

// `listenbrainz` (docs/outputs.md "listenbrainz"): the station's listens, as ListenBrainz's
// API takes them: `POST /1/submit-listens` with `Authorization: Token <user token>`, a
// `playing_now` listen (no time) when a track starts, a `single` listen with `listened_at` once
// it counts (scrobbler.ts). Their rules: one call per second, a listen of at most 10240 bytes,
// 429 answered after `X-RateLimit-Reset-In` seconds, and a window with no calls left waited out.

export interface ListenBrainzConfig {
  name: string;
  token: string;
  /** API root, default https://api.listenbrainz.org */
  url?: string;
}

const DEFAULT_API_ROOT = 'https://api.listenbrainz.org';
/** "never more than ONE call per second". */
const CALL_GAP_MS = 1000;
/** A listen's text fields are cut so that one listen stays well inside MAX_LISTEN_SIZE (10240 bytes). */
const MAX_TEXT_LENGTH = 512;

/** `clock`: the calls' spacing and the service's waits (tests see the waits instead of taking them). */
export function createListenBrainzOutput(config: ListenBrainzConfig, lookup?: RecordLookup, clock?: SpacingClock): Output {
  const root = (config.url ?? DEFAULT_API_ROOT).replace(/\/+$/, '');
  const spacing = new RequestSpacing(CALL_GAP_MS, clock);
  const headers = { authorization: `Token ${config.token}`, 'content-type': 'application/json' };

  async function submit(listenType: 'playing_now' | 'single', play: Play, signal: AbortSignal): Promise<Delivery> {
    const wait = await spacing.turn(signal);
    if (wait !== undefined) return { outcome: 'retry', error: 'waiting for the rate limit window', retryAfterMs: wait };
    const body = JSON.stringify({ listen_type: listenType, payload: [listenOf(play, listenType === 'single')] });
    const answer = await sendHttp(`${root}/1/submit-listens`, { method: 'POST', headers, body }, signal);
    spacing.answered();
    const resetInMs = rateLimitResetMs(answer.headers);
    if (resetInMs !== undefined && (answer.delivery.status === 429 || answer.headers['x-ratelimit-remaining'] === '0')) spacing.holdFor(resetInMs);
    const delivery = answer.delivery;
    if (delivery.outcome === 'delivered') return { ...delivery, receipt: listenType === 'single' ? 'listen accepted' : 'playing now' };
    if (delivery.status === 429)
      return { outcome: 'retry', status: 429, error: 'rate limited (HTTP 429)', ...(resetInMs === undefined ? {} : { retryAfterMs: resetInMs }) };
    if (delivery.status === 401) return { ...delivery, outcome: 'failed', error: 'HTTP 401: the user token was refused' };
    return { ...delivery, error: `${delivery.error}${serviceError(answer.body)}` };
  }

  const service: ScrobbleService = {
    nowPlaying: (play, signal) => submit('playing_now', play, signal),
    scrobble: (play, signal) => submit('single', play, signal),
  };
  return createScrobblerOutput({ name: config.name, type: 'listenbrainz', target: redactedTarget(root), service, ...(lookup ? { lookup } : {}) });
}

/** One listen of the submit-listens payload; `listened_at` (seconds) only on a `single`. */
export function listenOf(play: Play, withTime: boolean): Record<string, unknown> {
  const cut = (text: string) => [...text].slice(0, MAX_TEXT_LENGTH).join('');
  const additional: Record<string, unknown> = { submission_client: 'svc', submission_client_version: VERSION, media_player: 'svc' };
  if (play.durationSeconds !== undefined) additional.duration_ms = Math.round(play.durationSeconds * 1000);
  if (play.recordingMbid) additional.recording_mbid = play.recordingMbid;
  if (play.releaseMbid) additional.release_mbid = play.releaseMbid;
  if (play.artistMbid) additional.artist_mbids = [play.artistMbid];
  if (play.isrc) additional.isrc = play.isrc;
  const track: Record<string, unknown> = { artist_name: cut(play.artist), track_name: cut(play.title), additional_info: additional };
  if (play.album) track.release_name = cut(play.album);
  return withTime ? { listened_at: Math.floor(play.startedAtMs / 1000), track_metadata: track } : { track_metadata: track };
}

/**
 * The longest hold a `X-RateLimit-Reset-In` earns. ListenBrainz's windows are seconds long; a
 * huge value (a broken proxy, a hostile server) must not stop the output until svc restarts
 * (docs/outputs.md): it is taken as this minute, after which the next call finds out again.
 */
export const MAX_RATE_LIMIT_HOLD_MS = 60_000;

export function rateLimitResetMs(headers: http.IncomingHttpHeaders): number | undefined {
  const value = headers['x-ratelimit-reset-in'];
  const seconds = typeof value === 'string' ? Number(value) : Number.NaN;
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(Math.ceil(seconds * 1000), MAX_RATE_LIMIT_HOLD_MS) : undefined;
}

/** ListenBrainz explains a refusal as `{"code": 400, "error": "..."}`. */
function serviceError(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    return typeof parsed.error === 'string' ? `: ${parsed.error.slice(0, 200)}` : '';
  } catch {
    return '';
  }
}
