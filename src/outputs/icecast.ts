import { sendHttp } from './http-send';
import { redactedTarget, trackDataOf, type Output } from './output';
import { streamTitleTemplate } from './stream-title';

// `icecast` (docs/outputs.md "icecast and shoutcast"): sets the mount's title at once on a
// change, with Icecast's `GET /admin/metadata?mount=/m&mode=updinfo&song=…` and HTTP Basic auth
// (the source user, `source` by default). Only the newest title matters when behind.

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
      const { delivery } = await sendHttp(admin.href, { headers: { authorization } }, signal);
      return delivery;
    },
    close: () => Promise.resolve(),
  };
}
