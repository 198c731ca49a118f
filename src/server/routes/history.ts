import Router from '@koa/router';
import { parseIsoDateTime } from '../../domain/iso-time';
import { AppError } from '../../errors';
import { deleteTrack, type DeleteDeps } from '../../pipeline/delete-track';
import { editTrack } from '../../pipeline/edit-track';
import type { SanitizeOptions } from '../../pipeline/sanitize';
import { parseBody, rawRequestOf } from '../middleware/body';
import { shortName } from '../../pipeline/parse';
import type { HistoryQuery, TrackStore } from '../../store/tracks';
import type { AppMiddleware, AppState } from '../context';
import { HISTORY_PAGE_MAX_BYTES, createHistoryPages, historyEntry } from '../read-models/history-pages';
import { HISTORY_PAGE_LIMIT, parseDbid } from '../../domain/history';
import { reserveReply, requestGone, type WorkPool } from '../guards/work-pool';
import type { QueueBudget } from '../guards/queue-budget';
import { matchesEtag } from '../../domain/etag';

// GET /v1/history, PATCH and DELETE /v1/history/<dbid> (docs/decisions.md "History"; docs/http-api.md).

export interface HistoryDeps extends DeleteDeps {
  tracks: TrackStore;
  /** Pages not already kept are read here, fairly between clients (server/guards/work-pool.ts). */
  pool: WorkPool;
  /** limits.maxQueuedBytes: page bodies count in it until they have left for the kernel. */
  budget: QueueBudget;
  /** Idempotency-Key handling (middleware/idempotency.ts). */
  idempotent: AppMiddleware;
  maxBodyBytes: number;
  /** A correction's fields are sanitized as a submission's are. */
  limits: SanitizeOptions & { maxFields: number };
  /** A correction of air times counts the play's listeners again (playlog/play-log.ts). */
  playLog: { countNow(): Promise<void> };
}

export function historyRoutes(deps: HistoryDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });

  const pages = createHistoryPages(deps.tracks);

  router.get('/history', async (ctx) => {
    const query = parseHistoryQuery(ctx.query);
    const kept = pages.cached(query);
    // Room for the body is taken before the page is made: a page waiting for room holds nothing.
    const reservation = await reserveReply(ctx.req, ctx.res, deps.budget, kept ? kept.bytes.length : HISTORY_PAGE_RESERVE_BYTES);
    // A small kept page costs what /v1/last costs and is answered at once. A larger one waits its
    // turn in the pool like a page still to be read: sending a 1 MiB body is work the event loop
    // does, and the pool's queue is what turns a flood of them into 503s.
    const { bytes, etag } =
      kept && kept.bytes.length <= SMALL_KEPT_PAGE_BYTES
        ? kept
        : await deps.pool.run(
            ctx.ip,
            () => pages.answer(query),
            () => requestGone(ctx.res),
          );
    if (!kept) reservation.resize(bytes.length);
    ctx.set({ ETag: etag, 'Cache-Control': 'no-cache' });
    ctx.type = 'application/json';
    if (matchesEtag(ctx.get('If-None-Match'), etag)) {
      ctx.status = 304;
      return;
    }
    ctx.body = bytes;
  });

  router.delete('/history/:dbid', deps.idempotent, async (ctx) => {
    const dbid = dbidParam(ctx.params.dbid);
    await deleteTrack(rawRequestOf(ctx), dbid, deps);
    ctx.status = 204;
  });

  router.patch('/history/:dbid', ...parseBody(deps.maxBodyBytes), async (ctx) => {
    const dbid = dbidParam(ctx.params.dbid);
    const { record, warnings } = await editTrack(rawRequestOf(ctx), dbid, {
      ...deps.limits,
      secret: deps.secret,
      tracks: deps.tracks,
      nowPlaying: deps.nowPlaying,
      countListeners: () => deps.playLog.countNow(),
      by: correctorOf(ctx.ip, ctx.get('User-Agent')),
    });
    ctx.body = { record: historyEntry(record), warnings };
  });
  return router;
}

/** Pure: who asks for a correction, for its audit entry: the client's address, and `cli` before it for svc's own client (src/cli/client.ts's User-Agent). */
export function correctorOf(address: string, userAgent: string): string {
  return /^svc\/\S+$/.test(userAgent) ? `cli ${address}` : address;
}

/** The `<dbid>` of the path; anything but a positive integer is a 400. */
function dbidParam(raw = ''): number {
  const dbid = parseDbid(raw);
  if (dbid === undefined) throw new AppError('INVALID_PARAMETERS', `Invalid dbid '${shortName(raw)}': expected a positive integer`);
  return dbid;
}

/** A kept page up to this size skips the expensive-work pool: about 100 tracks without long artist biographies. */
const SMALL_KEPT_PAGE_BYTES = 64 * 1024;

/** A page's body stays within HISTORY_PAGE_MAX_BYTES, plus its first record when that alone is larger. */
const HISTORY_PAGE_RESERVE_BYTES = HISTORY_PAGE_MAX_BYTES + 128 * 1024;

type Query = Readonly<Record<string, string | string[] | undefined>>;

/** Pure: the query string of GET /v1/history; any malformed or unknown parameter is a 400 naming it. */
function parseHistoryQuery(query: Query): HistoryQuery {
  const result: HistoryQuery = { limit: HISTORY_PAGE_LIMIT.default };
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) throw invalid(`Repeated query parameter '${shortName(key)}'`);
    switch (key) {
      case 'limit': {
        const limit = /^\d{1,4}$/.test(value) ? Number(value) : NaN;
        if (!(limit >= 1 && limit <= HISTORY_PAGE_LIMIT.max)) throw invalid(`Invalid 'limit': expected an integer from 1 to ${HISTORY_PAGE_LIMIT.max}`);
        result.limit = limit;
        break;
      }
      case 'before': {
        const before = parseDbid(value);
        if (before === undefined) throw invalid(`Invalid 'before': expected a dbid (a positive integer)`);
        result.before = before;
        break;
      }
      case 'since':
      case 'until': {
        const at = parseIsoDateTime(value, 'utc');
        if (at === undefined) {
          throw invalid(`Invalid '${key}': expected an ISO 8601 date-time such as 2026-11-22T20:00:00Z (write + in an offset as %2B)`);
        }
        result[key] = at;
        break;
      }
      default:
        throw invalid(`Unknown query parameter '${shortName(key)}' (expected limit, before, since, until)`);
    }
  }
  return result;
}

function invalid(message: string): AppError {
  return new AppError('INVALID_PARAMETERS', message);
}
