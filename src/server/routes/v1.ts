import Router from '@koa/router';
import { AppError } from '../../errors';
import type { NowPlaying } from '../../domain/current-track';
import { endPlay } from '../../pipeline/end-play';
import type { PlayLog } from '../../playlog/play-log';
import { checkSubmission, submitTrack, type SubmitDeps } from '../../pipeline/submit-track';
import type { DatabaseState } from '../../store/health';
import type { StreamStatus } from '../../recognition/recognition';
import type { SchemaVersion } from '../../store/store';
import type { TrackStore } from '../../store/tracks';
import type { AppContext, AppMiddleware, AppState } from '../context';
import { parseBody, rawRequestOf } from '../middleware/body';
import { lastResponse } from './last';
import type { ChannelViews } from '../streams/channel-views';

// Thin handlers for /v1 (docs/http-api.md): they shape HTTP in and out; the use case lives in pipeline/.

export interface V1Deps {
  version: string;
  /** The commit when svc runs from a git clone, else null (version.ts). */
  commit: string | null;
  /** The backend and its schema version (docs/running.md "Versions"). */
  schema: SchemaVersion;
  maxBodyBytes: number;
  nowPlaying: NowPlaying;
  /** `?channel=` (docs/channels.md "Now playing per channel"); without it the route shows `nowPlaying`. */
  channels?: ChannelViews;
  /** Channels with a play on air and no audience source (docs/channels.md "No silent zeros"). */
  unheardChannels?: () => { channel: string; dbid: number; problem: string }[];
  tracks: TrackStore;
  submit: SubmitDeps;
  /** docs/decisions.md: /v1/status reports "database": "unavailable" after a storage failure. */
  databaseState: () => DatabaseState;
  /** PostgreSQL: whether other instances' changes arrive (docs/several-instances.md "PgBouncer"); absent with SQLite. */
  notifications?: () => 'ok' | 'silent';
  /** Outside services skipped after a failure (docs/title-first.md "Negative cache"). */
  failingServices: () => string[];
  /** Idempotency-Key handling (middleware/idempotency.ts), before the use case. */
  idempotent: AppMiddleware;
  /** Lets a graceful shutdown wait for submissions already being processed. */
  trackInFlight: <T>(work: Promise<T>) => Promise<T>;
  /** Ends plays, and names the complement warnings of the last 3 hours (docs/play-log.md). */
  playLog: PlayLog;
  /** Each listened stream and the library's size (docs/recognition.md "Status"); null while recognition is off. */
  recognition?: () => { library: number; streams: readonly StreamStatus[] } | null;
}

export function v1Routes(deps: V1Deps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });
  const build = { version: deps.version, ...(deps.commit === null ? {} : { commit: deps.commit }), schema: deps.schema };
  const statusOf: Record<DatabaseState, string> = {
    ok: JSON.stringify({ status: 'ok', ...build, database: 'ok' }),
    unavailable: JSON.stringify({ status: 'ok', ...build, database: 'unavailable' }),
  };

  router.get('/status', (ctx) => {
    ctx.type = 'application/json';
    const failing = deps.failingServices();
    const notifications = deps.notifications?.();
    const warnings = deps.playLog.warnings();
    const recognition = deps.recognition?.() ?? null;
    const unheard = deps.unheardChannels?.() ?? [];
    // The usual answer is built once; a failing service, a silent channel, a complement warning, recognition or an unheard channel is news worth a fresh one.
    ctx.body =
      failing.length === 0 && notifications !== 'silent' && warnings.length === 0 && recognition === null && unheard.length === 0
        ? statusOf[deps.databaseState()]
        : JSON.stringify({
            status: 'ok',
            ...build,
            database: deps.databaseState(),
            ...(notifications === 'silent' ? { notifications } : {}),
            ...(failing.length === 0 ? {} : { failing_services: failing }),
            ...(warnings.length > 0 ? { playlog_warnings: warnings } : {}),
            ...(recognition ? { recognition } : {}),
            ...(unheard.length > 0 ? { unheard_channels: unheard } : {}),
          });
  });

  // The plain `GET /v1/last` is answered by server/fast-paths/last-fast-path.ts before Koa; this route
  // serves the other spellings (`/v1/last?x`, `/v1/last/`) and gives the path its 405 and OPTIONS.
  router.get('/last', (ctx) => {
    const view = deps.channels ? deps.channels.choose(ctx.query.channel) : deps.nowPlaying;
    const answer = lastResponse(view.snapshot(), ctx.get('If-None-Match'));
    ctx.set(answer.headers);
    ctx.status = answer.status;
    if (answer.body !== undefined) ctx.body = answer.body;
  });

  const stampArrival = async (ctx: AppContext, next: () => Promise<unknown>) => {
    // The arrival number is stored with the record; it is taken before the body is read.
    if (ctx.method !== 'HEAD') ctx.state.receivedSeq = await deps.tracks.nextReceivedSeq();
    await next();
  };

  const remoteInput = async (ctx: AppContext) => {
    const request = rawRequestOf(ctx);
    if (ctx.method === 'HEAD') {
      checkSubmission(request, deps.submit);
      ctx.status = 200;
      ctx.type = 'application/json';
      return;
    }
    const receivedSeq = ctx.state.receivedSeq;
    if (receivedSeq === undefined) throw new AppError('INTERNAL', 'arrival not stamped');
    const idempotencyKey = ctx.get('Idempotency-Key');
    ctx.body = await deps.trackInFlight(submitTrack(request, receivedSeq, deps.submit, idempotencyKey === '' ? undefined : idempotencyKey));
  };

  // Reached only without an Upgrade header: the WebSocket handshake is taken by the http server.
  router.get('/images/ws', () => {
    throw new AppError('UPGRADE_REQUIRED', undefined, { headers: { Upgrade: 'websocket' } });
  });

  router.post('/remoteinput/end', ...parseBody(deps.maxBodyBytes), async (ctx) => {
    // The play log refreshes the current track's copy before it answers (app/start-app.ts).
    ctx.body = await endPlay(rawRequestOf(ctx), { ...deps.submit, playLog: deps.playLog });
  });
  router.get('/remoteinput', stampArrival, deps.idempotent, remoteInput);
  router.post('/remoteinput', stampArrival, ...parseBody(deps.maxBodyBytes), deps.idempotent, remoteInput);
  return router;
}
