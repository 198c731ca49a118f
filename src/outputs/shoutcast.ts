import { sendHttp } from './http-send';
import { redactedTarget, trackDataOf, type Output } from './output';
import { streamTitleTemplate } from './stream-title';

// `shoutcast` (docs/outputs.md "icecast and shoutcast"): `GET /admin.cgi?mode=updinfo&pass=…&song=…`
// (and `sid=` for a SHOUTcast 2 stream), at once on a change. The password travels in the query
// as Shoutcast wants it; it never appears in a status, an error or a log.

export interface ShoutcastConfig {
  name: string;
  url: string;
  password: string;
  sid?: number;
  format?: string;
}

export function createShoutcastOutput(config: ShoutcastConfig): Output {
  const base = new URL(config.url);
  const title = streamTitleTemplate(config.format);
  return {
    name: config.name,
    type: 'shoutcast',
    feeds: { changed: 'track.changed', restored: 'track.deleted' },
    latestOnly: true,
    target: redactedTarget(config.url),
    async send(message, signal) {
      const admin = new URL('/admin.cgi', base.origin);
      if (config.sid !== undefined) admin.searchParams.set('sid', String(config.sid));
      admin.searchParams.set('mode', 'updinfo');
      admin.searchParams.set('pass', config.password);
      admin.searchParams.set('song', title(trackDataOf(message)));
      // SHOUTcast 1 answers admin.cgi only to browser-like user agents.
      const { delivery } = await sendHttp(admin.href, { headers: { 'user-agent': 'Mozilla/5.0 (compatible; svc)' } }, signal);
      return delivery;
    },
    close: () => Promise.resolve(),
  };
}
