import Router from '@koa/router';
import type { Logger } from '../../log';
import { secretMatches } from '../../pipeline/authenticate';
import { callbackBasicPassword } from '../../pipeline/icecast-credentials';
import type { ListenerReport, ListenerSessions } from '../../playlog/listener-sessions';
import type { PlayLog } from '../../playlog/play-log';
import type { AppContext, AppState } from '../context';
import { parseBody } from '../middleware/body';
import { credentialHeader } from '../guards/credentials';

// POST /v1/icecast/listeners: Icecast's URL authentication (docs/play-log.md "Listener
// sessions"). Icecast 2.4 POSTs form fields (xiph/Icecast-Server src/auth_url.c,
// url_add_listener and url_remove_listener: action, server, port, client, mount, user, pass,
// ip, agent, and duration on listener_remove; mount_add/mount_remove carry mount, server, port)
// and admits a listener when the answer has the auth header. Every answer carries it: a
// listener is never refused because of svc, not even for a wrong secret or a full disk.

export const ICECAST_AUTH_HEADER = 'icecast-auth-user';
export const ICECAST_LISTENERS_PATH = '/v1/icecast/listeners';
/** The listener callbacks as a door of the failure budget: never held, and a refusal still admits the listener. */
export const ICECAST_LISTENERS_DOOR = { name: 'the Icecast listener callbacks', headers: { [ICECAST_AUTH_HEADER]: '1' } };

export interface IcecastListenerDeps {
  secret: string;
  maxBodyBytes: number;
  sessions: ListenerSessions;
  playLog: PlayLog;
  logger: Logger;
}

/** Icecast waits for the answer before it admits the listener: a slow database costs the record, not the wait. */
const RECORD_WAIT_MS = 2000;

export function icecastListenerRoutes(deps: IcecastListenerDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });

  const admit = async (ctx: AppContext, next: () => Promise<unknown>) => {
    // Set before the body is read, so that even a body refused with a 4xx admits the listener.
    ctx.set(ICECAST_AUTH_HEADER, '1');
    await next();
  };

  router.post('/icecast/listeners', admit, ...parseBody(deps.maxBodyBytes), async (ctx) => {
    ctx.type = 'application/json';
    if (!authorized(ctx, deps.secret)) {
      // Counted in the failure budget of the address and logged with it (middleware/auth-throttle.ts).
      ctx.state.wrongSecret = true;
      ctx.status = 403;
      ctx.body = { error: 'Invalid secret' };
      return;
    }
    const form = formOf(ctx);
    const action = form.action ?? '';
    const work = handle(action, form, deps);
    if (!work) {
      ctx.status = 400;
      ctx.body = { error: `Unknown action '${action.slice(0, 64)}' (expected listener_add, listener_remove, mount_add, mount_remove)` };
      return;
    }
    // `recorded` says whether anything was stored (a mount svc does not count, a bad duration: false).
    const recorded = await Promise.race([work, new Promise<boolean>((resolve) => setTimeout(resolve, RECORD_WAIT_MS, false).unref())]);
    ctx.body = { action, recorded };
  });
  return router;
}

/**
 * Icecast's listener_remove `duration`: whole seconds, written with "%lu" (auth_url.c
 * url_remove_listener). Absent: undefined. Anything else (`-1`, `NaN`, `1e13`, `0x10`, more than
 * ten years) is no duration Icecast sends: null, and nothing is recorded.
 */
export function listenedSeconds(text: string | undefined): number | undefined | null {
  if (text === undefined || text === '') return undefined;
  if (!/^\d{1,9}$/.test(text)) return null;
  const seconds = Number(text);
  return seconds <= MAX_LISTENED_SECONDS ? seconds : null;
}

/** Ten years: longer than any listener session Icecast can report. */
const MAX_LISTENED_SECONDS = 10 * 365 * 24 * 3600;

function handle(action: string, form: Readonly<Record<string, string>>, deps: IcecastListenerDeps): Promise<boolean> | undefined {
  const report: ListenerReport = {
    host: form.server,
    port: form.port,
    mount: form.mount ?? '',
    clientId: form.client ?? '',
    ip: form.ip ?? '',
    userAgent: form.agent ?? '',
  };
  switch (action) {
    case 'listener_add':
      return deps.sessions.record('joined', report, 'auth');
    case 'listener_remove': {
      const duration = listenedSeconds(form.duration);
      if (duration === null) return Promise.resolve(false);
      return deps.sessions.record('left', report, 'auth', duration);
    }
    case 'mount_add':
      // A source started on the audience's Icecast: svc has seen the mount live from now.
      return deps.sessions.mountStarted(report).catch(() => false);
    case 'mount_remove':
      // The source on the audience's Icecast went away: the mount's live stretch and the play on its channel end.
      return deps.sessions
        .mountEnded(report)
        .then(
          (target) => (target ? deps.playLog.end(target.channel, 'source_disconnect').then(() => true) : false),
          () => false,
        )
        .catch(() => false);
    default:
      return undefined;
  }
}

/**
 * The secret as a credential header, else as the Basic password (pipeline/icecast-credentials.ts:
 * an empty one is no secret given), else as `?secret=`.
 */
function authorized(ctx: AppContext, secret: string): boolean {
  if (secret === '') return true;
  const expected = Buffer.from(secret, 'utf8');
  const header = credentialHeader(ctx);
  if (header !== '') return secretMatches(Buffer.from(header, 'latin1'), expected);
  const password = callbackBasicPassword(ctx.get('Authorization'));
  if (password !== '') return secretMatches(Buffer.from(password, 'latin1'), expected);
  const query = ctx.query.secret;
  return typeof query === 'string' && query !== '' && secretMatches(Buffer.from(query, 'utf8'), expected);
}

function formOf(ctx: AppContext): Record<string, string> {
  const body = (ctx.request as { body?: unknown }).body;
  const form: Record<string, string> = {};
  if (typeof body !== 'object' || body === null) return form;
  for (const [key, value] of Object.entries(body)) {
    if (typeof value === 'string') form[key] = value;
  }
  return form;
}
