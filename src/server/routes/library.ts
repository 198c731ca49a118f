import { PassThrough } from 'node:stream';
import Router from '@koa/router';
import { AppError } from '../../errors';
import type { AddEvent, AddSummary } from '../../recognition/library';
import type { LibraryEntry } from '../../store/library';
import type { AppMiddleware, AppState } from '../context';
import { parseBody, requireObjectBody } from '../middleware/body';
import { requireSecret } from '../middleware/require-secret';

// The recognition library over HTTP (docs/recognition.md "The library"; docs/http-api.md):
// GET /v1/library, POST /v1/library {"paths": [...]} (answered as NDJSON, a line per file as it is
// read, then the summary), DELETE /v1/library/{id} and DELETE /v1/library?path=. The paths are
// the server's; every call takes the shared secret.

export interface LibraryRoutesDeps {
  secret: string;
  maxBodyBytes: number;
  library: {
    add(paths: readonly string[], onEvent: (event: AddEvent) => void): Promise<AddSummary>;
    list(): Promise<LibraryEntry[]>;
    remove(selector: { id: number } | { path: string }): Promise<number[]>;
  };
}

/** Paths one request may name. */
const MAX_PATHS = 1000;

export function libraryRoutes(deps: LibraryRoutesDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });
  const noStore: AppMiddleware = async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
  const secret = [requireSecret(deps.secret, { body: true }), noStore];

  router.get('/library', ...secret, async (ctx) => {
    const tracks = await deps.library.list();
    ctx.body = { count: tracks.length, tracks };
  });

  router.post('/library', ...parseBody(deps.maxBodyBytes), requireObjectBody, ...secret, (ctx) => {
    const body = ctx.request.body as Record<string, unknown>;
    const paths = body.paths;
    if (!Array.isArray(paths) || paths.length === 0 || paths.length > MAX_PATHS || !paths.every((item) => typeof item === 'string' && item !== '')) {
      throw new AppError('INVALID_PARAMETERS', `"paths" must be a list of 1 to ${MAX_PATHS} file, folder or playlist paths on the server`);
    }
    const out = new PassThrough();
    const line = (value: unknown) => {
      if (!out.writableEnded) out.write(`${JSON.stringify(value)}\n`);
    };
    ctx.type = 'application/x-ndjson';
    ctx.body = out;
    // A client that goes away leaves the add to finish: what it read is stored.
    deps.library
      .add(paths as string[], line)
      .then((summary) => line({ type: 'summary', ...summary }))
      .catch((error: unknown) => line({ type: 'error', error: error instanceof Error ? error.message : String(error) }))
      .finally(() => out.end());
  });

  router.delete('/library/:id', ...secret, async (ctx) => {
    const id = Number(ctx.params.id);
    if (!Number.isSafeInteger(id) || id <= 0) throw new AppError('INVALID_PARAMETERS', 'The library id must be a positive integer');
    const removed = await deps.library.remove({ id });
    if (removed.length === 0) throw new AppError('NOT_FOUND', `No library track ${id}`);
    ctx.body = { removed };
  });

  router.delete('/library', ...secret, async (ctx) => {
    const path = ctx.query.path;
    if (typeof path !== 'string' || path === '') throw new AppError('INVALID_PARAMETERS', 'Give ?path= (a file, or a folder whose files all go)');
    ctx.body = { removed: await deps.library.remove({ path }) };
  });

  return router;
}
