import { keyOfCoverUrl } from '../domain/image';
import { fieldText } from '../domain/track';
import type { ImageStore } from '../store/images';
import { sendHttp } from './http-send';
import { redactedTarget, trackDataOf, type Delivery, type Output, type TrackData } from './output';

// `discord` (docs/outputs.md "discord"): one message per track, after enrichment, through an
// execute-webhook URL with `?wait=true` (the answer is the message; its id is the receipt). The
// cover goes along as an attached file, so Discord needs no public URL. When behind, only the
// newest track is posted. A 429 names its wait in the body's `retry_after` (seconds).

/** Discord's embed limits (docs/outputs.md "discord"), in UTF-16 code units. */
const EMBED_LIMITS = { title: 256, authorName: 256, description: 4096, footerText: 2048, total: 6000 } as const;

const EXTENSIONS: Readonly<Record<string, string>> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp', 'image/gif': 'gif' };

export interface DiscordConfig {
  name: string;
  url: string;
}

export interface DiscordEmbed {
  title?: string;
  author?: { name: string };
  description?: string;
  footer?: { text: string };
  image?: { url: string };
}

export function createDiscordOutput(config: DiscordConfig, images: Pick<ImageStore, 'get'>): Output {
  const url = new URL(config.url);
  url.searchParams.set('wait', 'true');
  return {
    name: config.name,
    type: 'discord',
    feeds: { settled: 'track.changed' },
    latestOnly: true,
    // A webhook URL's path is its token.
    target: redactedTarget(config.url),
    async send(message, signal) {
      const data = trackDataOf(message);
      const key = keyOfCoverUrl(fieldText(data, 'coverurl') ?? '');
      const cover = key ? await images.get(key) : null;
      const extension = cover ? EXTENSIONS[cover.mimeType] : undefined;
      const filename = extension ? `cover.${extension}` : undefined;
      const embed = buildEmbed(data, filename);
      // No mention in a track title ever pings anyone.
      const payload = { embeds: [embed], allowed_mentions: { parse: [] }, ...(filename ? { attachments: [{ id: 0, filename }] } : {}) };
      const form = new FormData();
      form.set('payload_json', JSON.stringify(payload));
      if (cover && filename) form.set('files[0]', new Blob([cover.bytes], { type: cover.mimeType }), filename);
      const answer = await sendHttp(url.href, { method: 'POST', body: form }, signal);
      return withDiscordDetails(answer.delivery, answer.body);
    },
    close: () => Promise.resolve(),
  };
}

/** The message id as receipt; a 429's `retry_after` (seconds) as the wait. */
function withDiscordDetails(delivery: Delivery, body: string): Delivery {
  const parsed = parseObject(body);
  if (delivery.outcome === 'delivered') {
    const id = parsed?.id;
    return typeof id === 'string' ? { ...delivery, receipt: id } : delivery;
  }
  if (delivery.outcome === 'retry' && delivery.status === 429 && typeof parsed?.retry_after === 'number') {
    return { ...delivery, retryAfterMs: Math.ceil(Math.max(delivery.retryAfterMs ?? 0, parsed.retry_after * 1000)) };
  }
  return delivery;
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Title, artist as author, album and year: each cut to its limit, the whole within 6000. */
function buildEmbed(data: TrackData, coverFilename?: string): DiscordEmbed {
  const embed: DiscordEmbed = {};
  const title = fieldText(data, 'title') ?? '';
  const artist = fieldText(data, 'artist') ?? '';
  const year = fieldText(data, 'year') ?? fieldText(data, 'date')?.slice(0, 4) ?? '';
  const album = fieldText(data, 'album') ?? '';
  const description = [album, year].filter((part) => part !== '').join(' · ');
  let budget: number = EMBED_LIMITS.total;
  const take = (text: string, limit: number): string => {
    const cut = cutText(text, Math.min(limit, budget));
    budget -= cut.length;
    return cut;
  };
  if (title) embed.title = take(title, EMBED_LIMITS.title);
  if (artist) embed.author = { name: take(artist, EMBED_LIMITS.authorName) };
  if (description && budget > 0) embed.description = take(description, EMBED_LIMITS.description);
  if (coverFilename) embed.image = { url: `attachment://${coverFilename}` };
  return embed;
}

/** At most `limit` UTF-16 code units, never half a surrogate pair; a cut ends with "…". */
function cutText(text: string, limit: number): string {
  if (text.length <= limit) return text;
  if (limit <= 0) return '';
  let end = limit - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}
