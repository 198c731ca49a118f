import Router from '@koa/router';
import { AppError } from '../../errors';
import { recountPlays, type RecountOptions, type RecountStore } from '../../playlog/recount';
import { MAX_REPORT_DAYS } from '../../reports/report-query';
import { addDays, isCalendarDate, startOfLocalDay } from '../../reports/local-time';
import type { AppState } from '../context';
import { requireSecret } from '../middleware/require-secret';

// POST /v1/reports/recount?from=&to=[&channel=][&apply=1] (docs/play-log.md "Recounting"): the
// listeners of the ended plays in the range counted again from the stored sessions under the
// current config; before -> after per channel; written only with apply=1. Behind the secret, as
// the reports are: the counts are what the societies are paid on.

export interface RecountRoutesDeps {
  secret: string;
  store: RecountStore;
  /** The zone of a run's local dates (from and to, both included): reports.timeZone, or the named channel's own (docs/channels.md). */
  timeZoneOf: (channel: string | undefined) => string;
  channelOf: RecountOptions['channelOf'];
  minSessionSeconds: number;
  now?: () => number;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export function recountRoutes(deps: RecountRoutesDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });
  const secret = requireSecret(deps.secret, { unsetMessage: "A recount needs the shared secret, and the server has none: set secret in the server's config" });
  const now = deps.now ?? Date.now;
  router.post('/reports/recount', secret, async (ctx) => {
    const from = text(ctx.query.from);
    const to = text(ctx.query.to);
    if (from === undefined || to === undefined || !isCalendarDate(from) || !isCalendarDate(to))
      throw new AppError('INVALID_PARAMETERS', 'from and to are required, local dates YYYY-MM-DD (both included)');
    const channel = text(ctx.query.channel);
    const timeZone = deps.timeZoneOf(channel === '' ? undefined : channel);
    const startMs = startOfLocalDay(from, timeZone);
    const endMs = startOfLocalDay(addDays(to, 1), timeZone);
    if (endMs <= startMs) throw new AppError('INVALID_PARAMETERS', 'to is before from');
    if (endMs - startMs > (MAX_REPORT_DAYS + 1) * 86_400_000) throw new AppError('INVALID_PARAMETERS', `a recount covers at most ${MAX_REPORT_DAYS} days`);
    const apply = ctx.query.apply === '1' || ctx.query.apply === 'true';
    const range = { from: new Date(startMs).toISOString(), to: new Date(endMs).toISOString(), ...(channel === undefined || channel === '' ? {} : { channel }) };
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await recountPlays(deps.store, { range, channelOf: deps.channelOf, minSessionSeconds: deps.minSessionSeconds, nowMs: now(), apply });
  });
  return router;
}
