import fs from 'node:fs';
import path from 'node:path';
import Router, { type RouterContext } from '@koa/router';
import { AppError, ConfigError } from '../../errors';
import { staticContentType, staticRelativePath } from '../../domain/static-path';
import type { AppState } from '../context';
import { PAGE_CSP } from './pages';

// `staticDir` (docs/first-hour.md "Your own files"): the streamer's own templates, fonts and
// images at /static/<path> and at /httpstatic/<path> (What's Now Playing's name for it). Only
// regular files inside the folder are served: no listings, no `..` (plain or encoded), no
// hidden files, and no symlink that leads out of the folder.

const STATIC_PREFIXES = ['/static/', '/httpstatic/'] as const;

export function staticRoutes(staticDir: string): Router<AppState> {
  const router = new Router<AppState>();
  if (staticDir === '') return router;
  const root = realFolder(staticDir);
  const handler = (ctx: RouterContext<AppState>) => serveStatic(ctx, root);
  for (const prefix of STATIC_PREFIXES) router.get(new RegExp(`^${prefix}`), handler);
  return router;
}

/** The folder behind `staticDir`; a missing one is the user's to fix, like any config mistake (exit 2). */
function realFolder(dir: string): string {
  let real: string;
  try {
    real = fs.realpathSync(dir);
  } catch {
    throw new ConfigError(`staticDir ${dir}: no such folder (create it, or leave staticDir empty)`);
  }
  if (!fs.statSync(real).isDirectory()) throw new ConfigError(`staticDir ${dir}: not a folder`);
  return real;
}

async function serveStatic(ctx: RouterContext<AppState>, root: string): Promise<void> {
  const prefix = STATIC_PREFIXES.find((candidate) => ctx.path.startsWith(candidate)) ?? '';
  const relative = staticRelativePath(ctx.path.slice(prefix.length));
  const notFound = () => new AppError('NOT_FOUND', `Not found: ${ctx.path.slice(0, 256)}`);
  if (relative === null) throw notFound();
  let file: string;
  let stat: fs.Stats;
  try {
    // The real path, symlinks followed: it must still be inside the folder.
    file = await fs.promises.realpath(path.join(root, relative));
    stat = await fs.promises.stat(file);
  } catch {
    throw notFound();
  }
  if (!file.startsWith(root + path.sep) || !stat.isFile()) throw notFound();
  // A symlink to a hidden file or into a hidden folder of staticDir (`cover.png -> .env`) is
  // refused like the hidden file itself (docs/security.md "Smaller doors").
  if (
    path
      .relative(root, file)
      .split(path.sep)
      .some((segment) => segment.startsWith('.'))
  )
    throw notFound();
  const type = staticContentType(file);
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('Content-Security-Policy', type.startsWith('text/html') ? PAGE_CSP : "default-src 'none'; style-src 'unsafe-inline'");
  ctx.type = type;
  ctx.length = stat.size;
  ctx.lastModified = stat.mtime;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  // Koa sends no body for HEAD, and destroys the stream when the response ends either way.
  ctx.body = fs.createReadStream(file);
}
