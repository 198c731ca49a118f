import Router from '@koa/router';
import { AppError } from '../../errors';
import type { OutputDispatcher } from '../../outputs/dispatcher';
import { shortName } from '../../pipeline/parse';
import type { NowPlaying } from '../../domain/current-track';
import type { AppState } from '../context';
import { requireSecret } from '../middleware/require-secret';

// GET /v1/outputs and POST /v1/outputs/<name>/test (docs/outputs.md "Status: `GET /v1/outputs`"):
// the shared secret when one is set, as for writes: the answer names targets. No secret, token or password is in it.

export interface OutputRoutesDeps {
  secret: string;
  outputs: Pick<OutputDispatcher, 'status' | 'has' | 'test'>;
  nowPlaying: Pick<NowPlaying, 'current'>;
}

export function outputRoutes(deps: OutputRoutesDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });
  const secret = requireSecret(deps.secret);

  router.get('/outputs', secret, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { outputs: await deps.outputs.status() };
  });

  router.post('/outputs/:name/test', secret, async (ctx) => {
    const name = ctx.params.name ?? '';
    if (!deps.outputs.has(name)) throw new AppError('NOT_FOUND', `No output named '${shortName(name)}'`);
    const current = deps.nowPlaying.current();
    if (!current) throw new AppError('NOT_FOUND', 'No current track to send');
    const result = await deps.outputs.test(name, current);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = result;
  });

  return router;
}
