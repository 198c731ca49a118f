import { createHash } from 'node:crypto';
import Router from '@koa/router';
import type { TrackRecord } from '../../domain/track';
import { AppError } from '../../errors';
import { deleteTrack, type DeleteDeps } from '../../pipeline/delete-track';
import { shortName } from '../../pipeline/parse';
import type { HistoryPage, HistoryQuery, TrackStore } from '../../store/tracks';
import type { AppState } from '../context';
import { matchesEtag } from '../etag';

// GET /v1/history and DELETE /v1/history/<dbid> (decisions.md "History"; issue 11).

export const HISTORY_LIMIT = { default: 100, max: 1000 } as const;

export interface HistoryDeps extends DeleteDeps {
  tracks: TrackStore;
}

export function historyRoutes(deps: HistoryDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });

  router.get('/history', (ctx) => {
    const query = parseHistoryQuery(ctx.query);
    const body = historyBody(deps.tracks.history(query), query);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    ctx.set({ ETag: etag, 'Cache-Control': 'no-cache' });
    ctx.type = 'application/json';
    if (matchesEtag(ctx.get('If-None-Match'), etag)) {
      ctx.status = 304;
      return;
    }
    ctx.body = body;
  });

  router.delete('/history/:dbid', (ctx) => {
    const raw = ctx.params.dbid ?? '';
    const dbid = parseDbid(raw);
    if (dbid === undefined) throw new AppError('INVALID_PARAMETERS', `Invalid dbid '${shortName(raw)}': expected a positive integer`);
    deleteTrack(
      { method: ctx.method, query: ctx.query, authHeader: ctx.get('X-SVC-Client-Auth') || ctx.get('X-WNP-Client-Auth') },
      dbid,
      deps,
    );
    ctx.status = 204;
  });
  return router;
}

/** The /v1/history body: each entry is the /v1/last shape of its record plus `received_at`. */
export function historyBody(page: HistoryPage, query: HistoryQuery): string {
  const tracks = page.records.map(historyEntry);
  const last = page.records.at(-1);
  if (!page.more || !last) return JSON.stringify({ tracks });
  // Relative to base_url, like coverurl; the filters travel along so the next page keeps them.
  const next = new URLSearchParams({ before: String(last.dbid), limit: String(query.limit) });
  if (query.since !== undefined) next.set('since', query.since);
  if (query.until !== undefined) next.set('until', query.until);
  return JSON.stringify({ tracks, next: `v1/history?${next.toString()}` });
}

export function historyEntry(record: TrackRecord): Record<string, unknown> {
  // received_at last: a submitted field of that name never hides the real one.
  return { dbid: record.dbid, ...record.metadata, received_at: record.receivedAt };
}

type Query = Readonly<Record<string, string | string[] | undefined>>;

/** Pure: the query string of GET /v1/history; any malformed or unknown parameter is a 400 naming it. */
export function parseHistoryQuery(query: Query): HistoryQuery {
  const result: HistoryQuery = { limit: HISTORY_LIMIT.default };
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) throw invalid(`Repeated query parameter '${shortName(key)}'`);
    switch (key) {
      case 'limit': {
        const limit = /^\d{1,4}$/.test(value) ? Number(value) : NaN;
        if (!(limit >= 1 && limit <= HISTORY_LIMIT.max)) throw invalid(`Invalid 'limit': expected an integer from 1 to ${HISTORY_LIMIT.max}`);
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
        const at = parseIsoDateTime(value);
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

export function parseDbid(value: string): number | undefined {
  if (!/^[1-9]\d{0,15}$/.test(value)) return undefined;
  const dbid = Number(value);
  return Number.isSafeInteger(dbid) ? dbid : undefined;
}

const LAST_ISO_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?)?(Z|[+-]\d{2}:\d{2})?$/i;

/**
 * An ISO 8601 date or date-time, normalized to how received_at is stored (UTC, milliseconds).
 * Without an offset it is UTC. Impossible dates (February 30) are refused, not rolled over.
 */
export function parseIsoDateTime(value: string): string | undefined {
  const match = ISO_DATE_TIME.exec(value);
  if (!match) return undefined;
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', offset = 'Z'] = match;
  const numbers = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  const [y, mo, d, h, mi, s] = numbers;
  const calendar = new Date(Date.UTC(y, mo - 1, d));
  if (calendar.getUTCMonth() !== mo - 1 || calendar.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return undefined;
  let offsetMinutes = 0;
  if (offset.toUpperCase() !== 'Z') {
    const sign = offset.startsWith('-') ? -1 : 1;
    const [oh, om] = offset.slice(1).split(':').map(Number) as [number, number];
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = sign * (oh * 60 + om);
  }
  const ms = fraction === '' ? 0 : Math.floor(Number(`0${fraction}`) * 1000);
  const time = Date.UTC(y, mo - 1, d, h, mi, s, ms) - offsetMinutes * 60_000;
  // Four-digit years only (Date.UTC reads 0-99 as 1900-1999; past 9999 ISO strings stop sorting).
  if (y < 1000 || !(time <= LAST_ISO_TIME)) return undefined;
  return new Date(time).toISOString();
}
