import Router from '@koa/router';
import { AppError } from '../../errors';
import { EmptyRequest, type SongRequests } from '../../requests/song-requests';
import type { AppContext, AppMiddleware, AppState } from '../context';
import { parseBody, requireObjectBody } from '../middleware/body';
import { requireSecret } from '../middleware/require-secret';

// What's Now Playing's song-request queue API (docs/song-requests.md), as its request handlers
// answer on its main branch: POST/GET/DELETE /v1/requests, DELETE /v1/requests/{id}, and the
// Lumia plugin's handshake GET /v1/lumia/version. Every /v1/requests call takes the shared secret
// as a write does (header, else the body's `secret`, else `?secret=`).

export interface RequestRoutesDeps {
  secret: string;
  enabled: boolean;
  maxBodyBytes: number;
  requests: Pick<SongRequests, 'add' | 'list' | 'remove' | 'removeByIdentity' | 'clear'>;
  version: string;
}

/** The oldest Lumia plugin this API serves (What's Now Playing's minimum). */
const MIN_LUMIA_PLUGIN = '1.0.0';

export function requestRoutes(deps: RequestRoutesDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });
  const secret = requireSecret(deps.secret, { body: true });
  const writable: AppMiddleware = async (ctx, next) => {
    if (!deps.enabled) throw new AppError('REQUESTS_DISABLED');
    ctx.set('Cache-Control', 'no-store');
    await next();
  };

  router.post('/requests', ...parseBody(deps.maxBodyBytes), requireObjectBody, secret, writable, async (ctx) => {
    const body = ctx.request.body as Record<string, unknown>;
    try {
      ctx.body = await deps.requests.add(body);
    } catch (error) {
      if (!(error instanceof EmptyRequest)) throw error;
      ctx.status = 400;
      ctx.body = { error: 'Empty request: send query, or artist and title', accepted: false, reason: 'empty request' };
    }
  });

  router.get('/requests', secret, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { requests: deps.enabled ? await deps.requests.list() : [] };
  });

  router.delete('/requests', secret, writable, async (ctx) => {
    const artist = queryText(ctx, 'artist');
    const title = queryText(ctx, 'title');
    const requester = queryText(ctx, 'requester');
    if (artist && title) {
      const deleted = await deps.requests.removeByIdentity(artist, title, requester || undefined);
      if (deleted === 0) throw new AppError('NOT_FOUND', 'No matching request');
      ctx.body = { deleted };
      return;
    }
    // A partial identity is ambiguous: never a guess, never a clear-all.
    if (artist || title || requester) throw new AppError('INVALID_PARAMETERS', 'artist and title are both required to delete a single request');
    await deps.requests.clear();
    ctx.body = { cleared: true };
  });

  router.delete('/requests/:id', secret, writable, async (ctx) => {
    const text = ctx.params.id ?? '';
    if (!/^\d{1,15}$/.test(text)) throw new AppError('INVALID_PARAMETERS', 'Invalid request id');
    const removed = await deps.requests.remove(Number(text));
    if (!removed) throw new AppError('NOT_FOUND', 'No such request');
    ctx.body = { deleted: 1, request_id: removed.request_id };
  });

  router.get('/lumia/version', (ctx) => {
    const plugin = queryText(ctx, 'plugin_version') || '0';
    const accepted = compareVersions(plugin, MIN_LUMIA_PLUGIN) >= 0;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      wnp_version: deps.version,
      server: 'svc',
      min_plugin_version: MIN_LUMIA_PLUGIN,
      accepted,
      ...(accepted ? {} : { message: `Plugin version ${plugin.slice(0, 32)} is too old: version ${MIN_LUMIA_PLUGIN} or later is needed.` }),
    };
  });

  return router;
}

function queryText(ctx: AppContext, name: string): string {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw new AppError('INVALID_PARAMETERS', `Repeated query parameter '${name}'`);
  return (value ?? '').trim();
}

/** -1, 0 or 1 for dotted numeric versions ("1.2" = "1.2.0"); a version that is not one sorts first. */
export function compareVersions(a: string, b: string): number {
  const parts = (text: string) => (/^v?\d+(\.\d+)*$/.test(text.trim()) ? text.trim().replace(/^v/, '').split('.').map(Number) : null);
  const left = parts(a);
  const right = parts(b) ?? [];
  if (!left) return -1;
  for (let index = 0; index < Math.max(left.length, right.length); index += 1) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return Math.sign(difference);
  }
  return 0;
}
