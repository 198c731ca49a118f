import { compileEncodedTemplate, oneLine } from '../domain/template';
import { sendHttp } from './http-send';
import { redactedTarget, trackDataOf, type Output } from './output';

// `url` (docs/outputs.md "url: TuneIn AIR, radio.de and other directories"): one GET (or a POST
// with a form body) whose URL query is a template of the track's fields, each value
// URL-encoded, as directories such as TuneIn AIR and radio.de take the title. At once on a
// change; only the newest when behind (a directory shows what plays now). A 2xx is delivered
// and the target's answer text kept as the receipt.

export interface UrlOutputConfig {
  name: string;
  /** A template: `https://host/path?title={{title}}&artist={{artist}}` */
  url: string;
  method?: 'GET' | 'POST';
  headers?: Readonly<Record<string, string>>;
  /** POST only: a form body template, `artist={{artist}}&title={{title}}`. */
  body?: string;
}

/** What of the target's answer is kept as the receipt. */
const MAX_RECEIPT_LENGTH = 200;

export function createUrlOutput(config: UrlOutputConfig): Output {
  const method = config.method ?? 'GET';
  const url = compileEncodedTemplate(config.url, encodeURIComponent);
  const body = config.body === undefined ? undefined : compileEncodedTemplate(config.body, encodeURIComponent);
  const headers = { ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...lowerCaseNames(config.headers ?? {}) };
  const hide = secretsOf(config);
  return {
    name: config.name,
    type: 'url',
    feeds: { changed: 'track.changed' },
    latestOnly: true,
    // The query (and often the path) holds the directory's key: only the origin is shown.
    target: redactedTarget(config.url.replace(/\{\{?[^{}]*\}?\}/g, 'x')),
    async send(message, signal) {
      const track = trackDataOf(message);
      const answer = await sendHttp(url(track), { method, headers, ...(body && method === 'POST' ? { body: body(track) } : {}) }, signal);
      if (answer.delivery.outcome !== 'delivered') return withAnswer(answer.delivery, hide(answer.body));
      const receipt = hide(oneLine(answer.body)).slice(0, MAX_RECEIPT_LENGTH);
      return { ...answer.delivery, ...(receipt ? { receipt } : {}) };
    },
    close: () => Promise.resolve(),
  };
}

/** A refusal says the target's own words (TuneIn and radio.de explain a wrong key in the body). */
function withAnswer<T extends { error: string }>(delivery: T, text: string): T {
  const said = oneLine(text).slice(0, MAX_RECEIPT_LENGTH);
  return said ? { ...delivery, error: `${delivery.error}: ${said}` } : delivery;
}

/**
 * The fixed values of the URL's query, the form and the headers (keys, partner ids, tokens):
 * a target that echoes its request must not put one into a receipt or `last error`.
 */
function secretsOf(config: UrlOutputConfig): (text: string) => string {
  const fixed = (pairs: Iterable<[string, string]>) => [...pairs].map(([, value]) => value).filter((value) => !/\{/.test(value));
  const query = new URL(config.url.replace(/\{\{?[^{}]*\}?\}/g, '')).searchParams;
  const values = [...fixed(query), ...fixed(new URLSearchParams(config.body ?? '')), ...Object.values(config.headers ?? {})];
  const secrets = [...new Set(values.filter((value) => value.length >= 4))].sort((a, b) => b.length - a.length);
  return (text) => secrets.reduce((scrubbed, secret) => scrubbed.split(secret).join('…').split(encodeURIComponent(secret)).join('…'), text);
}

function lowerCaseNames(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
