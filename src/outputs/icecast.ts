import { sendHttp } from './http-send';
import { redactedTarget, trackDataOf, type Delivery, type Output } from './output';
import { streamTitleTemplate } from './stream-title';

// `icecast` (docs/outputs.md "icecast and shoutcast"): sets the mount's title at once on a
// change, with Icecast's `GET /admin/metadata?mount=/m&mode=updinfo&song=…` and HTTP Basic auth
// (the source user, `source` by default). Only the newest title matters when behind. A mount
// whose source has not connected yet is retried like a 5xx (docs/decisions.md "Delivery promises").

export interface IcecastConfig {
  name: string;
  /** `http://host:port/mount` */
  url: string;
  user?: string;
  password: string;
  format?: string;
}

export function createIcecastOutput(config: IcecastConfig): Output {
  const mountUrl = new URL(config.url);
  const title = streamTitleTemplate(config.format);
  const authorization = `Basic ${Buffer.from(`${config.user ?? 'source'}:${config.password}`).toString('base64')}`;
  return {
    name: config.name,
    type: 'icecast',
    feeds: { changed: 'track.changed', restored: 'track.deleted' },
    latestOnly: true,
    target: redactedTarget(config.url, true),
    async send(message, signal) {
      const admin = new URL('/admin/metadata', mountUrl.origin);
      admin.searchParams.set('mount', mountUrl.pathname);
      admin.searchParams.set('mode', 'updinfo');
      admin.searchParams.set('song', title(trackDataOf(message)));
      // Without it Icecast reads the song of an MP3 mount as Latin-1.
      admin.searchParams.set('charset', 'UTF-8');
      const { delivery, body } = await sendHttp(admin.href, { headers: { authorization } }, signal);
      return withIcecastReason(delivery, body);
    },
    close: () => Promise.resolve(),
  };
}

/** What Icecast says of a mount without a live source (2.4's admin answer: 400, "Source does not exist"). */
const NOT_LIVE_YET = /source (does not exist|is not available)|mount.*not.*(live|available)/i;
const MAX_REASON_LENGTH = 200;

/** Icecast's own reason (its error page's text) joins the status; a mount not live yet is retried. */
export function withIcecastReason(delivery: Delivery, body: string): Delivery {
  if (delivery.outcome === 'delivered') return delivery;
  const reason = icecastReason(body);
  const error = reason ? `${delivery.error}: ${reason}` : delivery.error;
  if (delivery.outcome === 'failed' && delivery.status === 400 && NOT_LIVE_YET.test(reason)) return { outcome: 'retry', status: 400, error };
  return { ...delivery, error };
}

/** The text of Icecast's error page, without its markup and the status it repeats ("400 - "). */
export function icecastReason(body: string): string {
  const text = body
    .replace(/<title>[^<]*<\/title>/i, '')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^\d{3}\s*-\s*/, '');
  return text.slice(0, MAX_REASON_LENGTH);
}
