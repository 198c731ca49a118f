import { startFake, type FakeReply, type FakeServer, type RecordedRequest } from './fake-server';

// ListenBrainz's submit endpoint on loopback, its rules taken from ListenBrainz's own
// documentation and source (github.com/metabrainz/listenbrainz-server):
// - docs/users/api/index.rst "Authentication": `Authorization: Token <user token>`;
//   "Rate limiting": every answer carries X-RateLimit-Limit, X-RateLimit-Remaining,
//   X-RateLimit-Reset-In (seconds until the window ends) and X-RateLimit-Reset; past the limit
//   the answer is 429; a client makes no more than one call per second.
// - docs/users/api/core.rst "POST /1/submit-listens": `listen_type` single, playing_now or
//   import; `payload` a list; a playing_now carries no `listened_at`; single and playing_now
//   carry exactly one listen.
// - listenbrainz/webserver/views/api_tools.py: MAX_LISTEN_SIZE 10240 bytes per listen,
//   MAX_LISTENS_PER_REQUEST 1000, MAX_LISTEN_PAYLOAD_SIZE (their product) per request,
//   LISTEN_MINIMUM_TS 1033430400, artist_name and track_name required and non-empty; a
//   refusal is `{"code": 400, "error": "..."}`, a bad token 401.

export const LISTENBRAINZ_LIMITS = { maxListenBytes: 10_240, maxListensPerRequest: 1000, maxPayloadBytes: 10_240_000, minimumListenedAt: 1_033_430_400 };

export interface SubmittedListen {
  listenType: 'single' | 'playing_now' | 'import';
  listen: {
    listened_at?: number;
    track_metadata: { artist_name: string; track_name: string; release_name?: string; additional_info?: Record<string, unknown> };
  };
  at: number;
}

export interface ListenBrainzFake {
  server: FakeServer;
  url: string;
  token: string;
  accepted: SubmittedListen[];
  /** Status and reason of every answer, in order. */
  answers: { status: number; error?: string; at: number }[];
  /** The next call is answered 429 with X-RateLimit-Reset-In `seconds`. */
  rateLimitOnce(seconds: number): void;
  close(): Promise<void>;
}

export async function startListenBrainzFake(options: { limit?: number; windowSeconds?: number } = {}): Promise<ListenBrainzFake> {
  const token = 'b7a3a8e2-0c4d-4bfb-9c6f-3d1d3e0f1a2b';
  const limit = options.limit ?? 30;
  const windowMs = (options.windowSeconds ?? 10) * 1000;
  const accepted: SubmittedListen[] = [];
  const answers: ListenBrainzFake['answers'] = [];
  let windowStart = 0;
  let used = 0;
  let forced429: number | undefined;

  const answer = (request: RecordedRequest, status: number, body: unknown): FakeReply => {
    const now = Date.now();
    if (now - windowStart >= windowMs) {
      windowStart = now;
      used = 0;
    }
    used += 1;
    const resetIn = Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000));
    const headers = {
      'content-type': 'application/json',
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(Math.max(0, limit - used)),
      'x-ratelimit-reset-in': String(resetIn),
      'x-ratelimit-reset': String(Math.floor(now / 1000) + resetIn),
    };
    const error = status === 200 ? undefined : (body as { error?: string }).error;
    answers.push({ status, ...(error ? { error } : {}), at: request.at });
    return { status, headers, body: JSON.stringify(body) };
  };

  const server = await startFake('listenbrainz', (request) => {
    if (request.method !== 'POST' || request.path !== '/1/submit-listens') return answer(request, 404, { code: 404, error: 'Not found' });
    if (forced429 !== undefined) {
      const seconds = forced429;
      forced429 = undefined;
      const reply = answer(request, 429, { code: 429, error: 'Too many requests' });
      return { ...reply, headers: { ...reply.headers, 'x-ratelimit-remaining': '0', 'x-ratelimit-reset-in': String(seconds) } };
    }
    if (request.headers.authorization !== `Token ${token}`) return answer(request, 401, { code: 401, error: 'Invalid authorization token.' });
    if (used >= limit && Date.now() - windowStart < windowMs) return answer(request, 429, { code: 429, error: 'Too many requests' });
    const refusal = validate(request.body);
    if (typeof refusal === 'string') return answer(request, 400, { code: 400, error: refusal });
    for (const listen of refusal.payload) accepted.push({ listenType: refusal.listen_type, listen, at: request.at });
    return answer(request, 200, { status: 'ok' });
  });

  return {
    server,
    url: server.url,
    token,
    accepted,
    answers,
    rateLimitOnce(seconds) {
      forced429 = seconds;
    },
    close: () => server.close(),
  };
}

type Submission = { listen_type: SubmittedListen['listenType']; payload: SubmittedListen['listen'][] };

/** The submission, or why ListenBrainz would refuse it. */
function validate(body: string): Submission | string {
  if (Buffer.byteLength(body) > LISTENBRAINZ_LIMITS.maxPayloadBytes) return 'Payload too large.';
  let parsed: { listen_type?: unknown; payload?: unknown };
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return 'Cannot parse JSON document.';
  }
  const type = parsed.listen_type;
  if (type !== 'single' && type !== 'playing_now' && type !== 'import') return 'JSON document does not contain a valid listen_type.';
  if (!Array.isArray(parsed.payload) || parsed.payload.length === 0) return 'JSON document does not contain any listens.';
  if (parsed.payload.length > LISTENBRAINZ_LIMITS.maxListensPerRequest) return 'Too many listens.';
  if (type !== 'import' && parsed.payload.length !== 1) return 'JSON document should contain exactly one listen.';
  for (const listen of parsed.payload as Record<string, unknown>[]) {
    if (Buffer.byteLength(JSON.stringify(listen)) > LISTENBRAINZ_LIMITS.maxListenBytes) return 'Listen is too large.';
    const metadata = listen.track_metadata as Record<string, unknown> | undefined;
    if (typeof metadata?.artist_name !== 'string' || metadata.artist_name.trim() === '') return 'artist_name must be a non-empty string.';
    if (typeof metadata.track_name !== 'string' || metadata.track_name.trim() === '') return 'track_name must be a non-empty string.';
    if (type === 'playing_now' && 'listened_at' in listen) return 'playing_now listens must not have listened_at.';
    if (type !== 'playing_now' && (typeof listen.listened_at !== 'number' || listen.listened_at < LISTENBRAINZ_LIMITS.minimumListenedAt)) {
      return 'Value for key listened_at is too low.';
    }
  }
  return parsed as Submission;
}
