import Router from '@koa/router';
import { AppError } from '../../errors';
import type { PlayLogStore } from '../../store/plays';
import type { AppState } from '../context';
import { requireSecret } from '../middleware/require-secret';

// GET /v1/listeners?channel=&since= (docs/play-log.md "Listeners you can see"): the stored
// listener sessions since a moment (default: the last 24 hours), newest last, at most LIMIT of
// them, and the sessions open now per channel. Behind the secret: sessions are listeners' traces.

export interface ListenerRoutesDeps {
  secret: string;
  sessions: Pick<PlayLogStore, 'sessionPages'>;
  openPerChannel: () => Promise<Map<string, number>>;
  now?: () => number;
}

const LIMIT = 1000;
const DAY_MS = 86_400_000;

export function listenerRoutes(deps: ListenerRoutesDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });
  const secret = requireSecret(deps.secret, { unsetMessage: "Listeners need the shared secret, and the server has none: set secret in the server's config" });
  const now = deps.now ?? Date.now;
  router.get('/listeners', secret, async (ctx) => {
    const nowMs = now();
    const since = typeof ctx.query.since === 'string' ? Date.parse(ctx.query.since) : nowMs - DAY_MS;
    if (Number.isNaN(since)) throw new AppError('INVALID_PARAMETERS', 'since: expected an ISO 8601 time');
    const channel = typeof ctx.query.channel === 'string' && ctx.query.channel !== '' ? ctx.query.channel : undefined;
    const sessions = [];
    let truncated = false;
    for await (const page of deps.sessions.sessionPages({
      from: new Date(since).toISOString(),
      to: new Date(nowMs + 1).toISOString(),
      ...(channel ? { channel } : {}),
    })) {
      for (const session of page) {
        if (sessions.length >= LIMIT) {
          truncated = true;
          break;
        }
        const endMs = session.disconnectedAt === null ? nowMs : Date.parse(session.disconnectedAt);
        sessions.push({
          channel: session.channel,
          mount: session.mount,
          start: session.connectedAt,
          end: session.disconnectedAt,
          seconds: Math.max(0, Math.round((endMs - Date.parse(session.connectedAt)) / 1000)),
          address: session.address,
          user_agent: session.userAgent,
        });
      }
      if (truncated) break;
    }
    const open = Object.fromEntries([...(await deps.openPerChannel())].filter(([name]) => channel === undefined || name === channel));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { open, sessions, truncated };
  });
  return router;
}
