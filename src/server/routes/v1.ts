import Router from '@koa/router';
import { AppError } from '../../errors';
import type { NowPlaying } from '../../pipeline/now-playing';
import type { RawRequest } from '../../pipeline/parse';
import { checkSubmission, submitTrack, type SubmitDeps } from '../../pipeline/submit-track';
import type { TrackStore } from '../../store/tracks';
import type { AppContext, AppState } from '../context';
import { isFormRequest, parseBody } from '../middleware/body';

// Thin handlers for /v1 (api-spec 4): they shape HTTP in and out; the use case lives in pipeline/.

export interface V1Deps {
  version: string;
  maxBodyBytes: number;
  nowPlaying: NowPlaying;
  tracks: TrackStore;
  submit: SubmitDeps;
  /** Lets a graceful shutdown wait for submissions already being processed. */
  trackInFlight: <T>(work: Promise<T>) => Promise<T>;
}

export function v1Routes(deps: V1Deps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });
  const status = JSON.stringify({ status: 'ok', version: deps.version });

  router.get('/status', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = status;
  });

  router.get('/last', (ctx) => {
    const { body, etag } = deps.nowPlaying.snapshot();
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'application/json';
    if (matchesEtag(ctx.get('If-None-Match'), etag)) {
      ctx.status = 304;
      return;
    }
    ctx.body = body;
  });

  const stampArrival = async (ctx: AppContext, next: () => Promise<unknown>) => {
    // Arrival order decides the current track, so take it before the body is read.
    if (ctx.method !== 'HEAD') ctx.state.receivedSeq = deps.tracks.nextReceivedSeq();
    await next();
  };

  const remoteInput = async (ctx: AppContext) => {
    const request = toRawRequest(ctx);
    if (ctx.method === 'HEAD') {
      checkSubmission(request, deps.submit);
      ctx.status = 200;
      ctx.type = 'application/json';
      return;
    }
    const receivedSeq = ctx.state.receivedSeq;
    if (receivedSeq === undefined) throw new AppError('INTERNAL', 'arrival not stamped');
    ctx.body = await deps.trackInFlight(submitTrack(request, receivedSeq, deps.submit));
  };

  // Reached only without an Upgrade header: the WebSocket handshake is taken by the http server.
  router.get('/images/ws', () => {
    throw new AppError('UPGRADE_REQUIRED', undefined, { headers: { Upgrade: 'websocket' } });
  });

  router.get('/remoteinput', stampArrival, remoteInput);
  router.post('/remoteinput', stampArrival, ...parseBody(deps.maxBodyBytes), remoteInput);
  return router;
}

/**
 * RFC 9110 13.1.2 weak comparison. Koa's `ctx.fresh` is not used: it ignores If-None-Match
 * when the request says `Cache-Control: no-cache`, which fetch() adds to every conditional request.
 */
export function matchesEtag(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch === '') return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => opaque(tag) === opaque(etag));
}

function toRawRequest(ctx: AppContext): RawRequest {
  return {
    method: ctx.method,
    query: ctx.query,
    body: ctx.method === 'POST' ? (ctx.request as { body?: unknown }).body : undefined,
    bodyIsForm: isFormRequest(ctx.get('Content-Type')),
    authHeader: ctx.get('X-SVC-Client-Auth') || ctx.get('X-WNP-Client-Auth'),
  };
}
