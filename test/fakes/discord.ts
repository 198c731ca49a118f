import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A Discord execute-webhook endpoint on loopback, its rules taken from Discord's own API
// documentation (github.com/discord/discord-api-docs):
// - docs/resources/webhook.mdx "Execute Webhook": POST /webhooks/{id}/{token}; JSON or
//   multipart/form-data with `payload_json` and `files[n]`; at least one of content, embeds,
//   components, file or poll; up to 10 embeds; `?wait=true` answers 200 with the message
//   object, without it 204 No Content.
// - docs/resources/message.mdx "Embed Limits": title 256, description 4096, footer.text 2048,
//   author.name 256, field name 256 and value 1024, 25 fields, and 6000 characters in all of
//   them across the message's embeds, counted after trimming leading and trailing whitespace;
//   a violation is a Bad Request. An image url supports http(s) and `attachment://<filename>`.
// - docs/resources/message.mdx "Attachment Object": in a create request an attachment needs only
//   its `id`, the n of its `files[n]` part.
// - docs/topics/rate-limits.md "Exceeding A Rate Limit": 429 with a JSON body {message,
//   retry_after (seconds, a float), global} and a Retry-After header.
// - docs/topics/opcodes-and-status-codes.md "JSON Error Codes": 10015 Unknown Webhook, 50006
//   Cannot send an empty message, 50035 Invalid Form Body.

export interface DiscordEmbed {
  title?: string;
  description?: string;
  author?: { name?: string };
  footer?: { text?: string };
  fields?: { name?: string; value?: string }[];
  image?: { url?: string };
}

export interface DiscordFile {
  field: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

export interface PostedMessage {
  id: string;
  embeds: DiscordEmbed[];
  files: DiscordFile[];
  attachments: { id: number | string; filename?: string }[];
  allowedMentions: unknown;
  at: number;
}

export interface DiscordFake {
  /** The execute-webhook URL (its path holds the token, as a real one does). */
  webhookUrl: string;
  token: string;
  posted: PostedMessage[];
  /** Every request, refused or not: status and arrival time. */
  requests: { status: number; at: number }[];
  /** The next `count` requests are rate limited for `retryAfterSeconds`. */
  rateLimit(count: number, retryAfterSeconds: number): void;
  close(): Promise<void>;
}

const LIMITS = { title: 256, description: 4096, footerText: 2048, authorName: 256, fieldName: 256, fieldValue: 1024, fields: 25, total: 6000 };

export async function startDiscordFake(): Promise<DiscordFake> {
  const webhookId = '223704706495545344';
  const token = `tok${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
  const posted: PostedMessage[] = [];
  const requests: { status: number; at: number }[] = [];
  let limited = { count: 0, seconds: 0 };
  let nextId = 1176350000000000000n;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      const reply = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
        requests.push({ status, at });
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(body === undefined ? undefined : JSON.stringify(body));
      };
      handle(req, Buffer.concat(chunks), at, reply).catch(() => reply(500, { message: '500: Internal Server Error', code: 0 }));
    });
  });

  async function handle(
    req: http.IncomingMessage,
    body: Buffer,
    at: number,
    reply: (status: number, body?: unknown, headers?: Record<string, string>) => void,
  ): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://discord.invalid');
    if (req.method !== 'POST' || url.pathname !== `/api/webhooks/${webhookId}/${token}`) return reply(404, { message: 'Unknown Webhook', code: 10015 });
    if (limited.count > 0) {
      limited.count -= 1;
      return reply(
        429,
        { message: 'You are being rate limited.', retry_after: limited.seconds, global: false },
        { 'retry-after': String(Math.ceil(limited.seconds)), 'x-ratelimit-scope': 'shared' },
      );
    }
    const parsed = await parseBody(req, body);
    if (!parsed) return reply(400, { message: 'Invalid Form Body', code: 50035 });
    const { payload, files } = parsed;
    const embeds = Array.isArray(payload.embeds) ? (payload.embeds as DiscordEmbed[]) : [];
    if (embeds.length === 0 && typeof payload.content !== 'string' && files.length === 0)
      return reply(400, { message: 'Cannot send an empty message', code: 50006 });
    const invalid = embeds.length > 10 ? 'embeds' : embedViolation(embeds);
    if (invalid)
      return reply(400, { message: 'Invalid Form Body', code: 50035, errors: { embeds: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: invalid }] } } });
    const attachments = Array.isArray(payload.attachments) ? (payload.attachments as PostedMessage['attachments']) : [];
    const id = String(nextId++);
    posted.push({ id, embeds, files, attachments, allowedMentions: payload.allowed_mentions, at });
    if (url.searchParams.get('wait') !== 'true') return reply(204);
    reply(200, {
      id,
      type: 0,
      channel_id: '199737254929760256',
      webhook_id: webhookId,
      content: typeof payload.content === 'string' ? payload.content : '',
      embeds: embeds.map((embed) => ({ type: 'rich', ...embed })),
      attachments: files.map((file, index) => ({
        id: String(nextId + BigInt(index)),
        filename: file.filename,
        size: file.bytes.length,
        content_type: file.contentType,
      })),
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    webhookUrl: `http://127.0.0.1:${port}/api/webhooks/${webhookId}/${token}`,
    token,
    posted,
    requests,
    rateLimit: (count, seconds) => {
      limited = { count, seconds };
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function parseBody(req: http.IncomingMessage, body: Buffer): Promise<{ payload: Record<string, unknown>; files: DiscordFile[] } | null> {
  const type = req.headers['content-type'] ?? '';
  try {
    if (type.startsWith('application/json')) return { payload: JSON.parse(body.toString('utf8')) as Record<string, unknown>, files: [] };
    if (!type.startsWith('multipart/form-data')) return null;
    const form = await new Request('http://discord.invalid/', { method: 'POST', headers: { 'content-type': type }, body }).formData();
    const files: DiscordFile[] = [];
    let payload: Record<string, unknown> = {};
    for (const [field, value] of form.entries()) {
      if (field === 'payload_json' && typeof value === 'string') payload = JSON.parse(value) as Record<string, unknown>;
      else if (typeof value !== 'string' && /^files\[\d+\]$/.test(field))
        files.push({ field, filename: value.name, contentType: value.type, bytes: Buffer.from(await value.arrayBuffer()) });
    }
    return { payload, files };
  } catch {
    return null;
  }
}

/** Characters as Discord counts them: after trimming, in code points. */
const length = (text: string | undefined) => [...(text ?? '').trim()].length;

function embedViolation(embeds: readonly DiscordEmbed[]): string | null {
  let total = 0;
  for (const embed of embeds) {
    const fields = embed.fields ?? [];
    const checks: [string, number, number][] = [
      ['title', length(embed.title), LIMITS.title],
      ['description', length(embed.description), LIMITS.description],
      ['author.name', length(embed.author?.name), LIMITS.authorName],
      ['footer.text', length(embed.footer?.text), LIMITS.footerText],
      ['fields', fields.length, LIMITS.fields],
      ...fields.flatMap((field): [string, number, number][] => [
        ['field.name', length(field.name), LIMITS.fieldName],
        ['field.value', length(field.value), LIMITS.fieldValue],
      ]),
    ];
    const over = checks.find(([, size, limit]) => size > limit);
    if (over) return `Must be ${over[2]} or fewer in length (${over[0]}).`;
    total += checks.filter(([name]) => name !== 'fields').reduce((sum, [, size]) => sum + size, 0);
  }
  const badImage = embeds.find((embed) => embed.image?.url !== undefined && !/^(https?:\/\/|attachment:\/\/)/.test(embed.image.url));
  if (badImage) return 'Scheme must be one of http, https, attachment (image.url).';
  return total > LIMITS.total ? `Embed size exceeds maximum size of ${LIMITS.total}` : null;
}
