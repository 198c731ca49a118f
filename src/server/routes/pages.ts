import fs from 'node:fs';
import path from 'node:path';
import Router, { type RouterContext } from '@koa/router';
import { AppError, StartupError, errorMessage } from '../../errors';
import type { AppState } from '../context';
import { etagOf, matchesEtag } from '../../domain/etag';

// The overlay pages shipped in the package (public/, plain HTML/CSS/JS, no build step):
//   GET /           now-playing overlay for an OBS browser source
//   GET /slideshow  full-window slideshow of the current track's images
//   GET /history    the setlist, newest first, updated live, with CSV and text downloads
//   GET /assets/<file>  their CSS and JS
//   GET /favicon.ico    the icon browsers ask for on every page load
// Files are read once at start-up; only the files found then are ever served.

const PUBLIC_DIR = path.resolve(__dirname, '..', '..', '..', 'public');

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.ico': 'image/x-icon',
};

// Scripts only from our own origin; the stream is on the same host (ws: for browsers whose
// 'self' does not cover WebSocket URLs yet). Styles may also be inline: OBS Browser Source
// applies its "Custom CSS" by appending a <style> element to the page (obs-browser
// browser-client.cpp, OnLoadEnd), and streamers restyle overlays that way, with web fonts and
// pictures from any https: address (an @import of a font service) or from staticDir
// (docs/first-hour.md "Styling the pages in OBS").
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline' https:; font-src 'self' https: data:; img-src 'self' https: data:; connect-src 'self' ws: wss:; base-uri 'none'; form-action 'none'";

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

const PAGES: Readonly<Record<string, string>> = { '/': 'overlay.html', '/slideshow': 'slideshow.html', '/history': 'history.html' };

export function pageRoutes(dir: string = PUBLIC_DIR): Router<AppState> {
  const assets = readAssets(dir);
  // Strict: `/history/` is not `/history` (it gets the redirect below).
  const router = new Router<AppState>({ strict: true });

  const serve = (ctx: RouterContext<AppState>, asset: Asset) => {
    ctx.set('ETag', asset.etag);
    // Revalidated on every load, so an upgrade of svc reaches the browser source at once.
    ctx.set('Cache-Control', 'no-cache');
    if (asset.type.startsWith('text/html')) ctx.set('Content-Security-Policy', PAGE_CSP);
    ctx.type = asset.type;
    if (matchesEtag(ctx.get('If-None-Match'), asset.etag)) {
      ctx.status = 304;
      return;
    }
    ctx.body = asset.body;
  };

  for (const [route, file] of Object.entries(PAGES)) {
    const asset = assets.get(file);
    if (!asset) throw new StartupError(`overlay page ${file} is missing from ${dir}`);
    router.get(route, (ctx) => serve(ctx, asset));
    // `/history/` is the same page. A redirect, not a second copy: the pages load their assets by
    // relative URLs, which resolve under /history/ to nothing. Relative, so a path prefix
    // added by a reverse proxy survives; the query string too.
    if (route !== '/') router.get(`${route}/`, (ctx) => redirectWithoutSlash(ctx, route));
  }
  const favicon = assets.get('favicon.ico');
  if (favicon) router.get('/favicon.ico', (ctx) => serve(ctx, favicon));
  router.get('/assets/:file', (ctx) => {
    const asset = assets.get(ctx.params.file ?? '');
    if (!asset || asset.type.startsWith('text/html')) throw new AppError('NOT_FOUND', `Not found: ${ctx.path}`);
    serve(ctx, asset);
  });
  // What's Now Playing's overlay sockets (server/streams/ws/wsstream.ts); reached only without an Upgrade.
  for (const socketPath of ['/wsstream', '/wsartistfanartstream']) {
    router.get(socketPath, () => {
      throw new AppError('UPGRADE_REQUIRED', undefined, { headers: { Upgrade: 'websocket' } });
    });
  }
  return router;
}

function redirectWithoutSlash(ctx: RouterContext<AppState>, route: string): void {
  ctx.status = 308;
  ctx.set('Location', `../${route.slice(1)}${ctx.querystring === '' ? '' : `?${ctx.querystring}`}`);
  ctx.body = { error: `Moved to ${route}` };
}

function readAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (error) {
    throw new StartupError(`cannot read the overlay pages in ${dir}: ${errorMessage(error)}`);
  }
  for (const name of names) {
    const type = CONTENT_TYPES[path.extname(name)];
    if (!type) continue;
    const body = fs.readFileSync(path.join(dir, name));
    assets.set(name, { body, type, etag: etagOf(body) });
  }
  return assets;
}
