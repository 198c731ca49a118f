import { asNumber, asObject, asText } from '../enrich/json-read';
import type { ServiceClient } from '../enrich/http';
import { wavFile, type OnlineIdentifier, type OnlineMatch, type OnlineSample } from './online';

// AudD's `recognize` as an online recogniser (docs/recognition.md "Online lookups"): a multipart
// POST to `https://api.audd.io/` of the sample as a WAV file (`file`) with the user's
// `api_token`. The answer is `{"status": "success", "result": {...}}` (`result` null: nothing
// found) or `{"status": "error", "error": {"error_code", "error_message"}}`. AudD gives no score.

export interface AudDOptions {
  /** `https://api.audd.io/` (or a test's fake). */
  baseUrl: string;
  apiToken: string;
  client: ServiceClient;
}

export function createAudDLookup(options: AudDOptions): OnlineIdentifier {
  return {
    service: 'audd',
    async identify(sample: OnlineSample, signal: AbortSignal): Promise<OnlineMatch | null> {
      const body = new FormData();
      body.set('api_token', options.apiToken);
      body.set('file', new Blob([wavFile(sample)], { type: 'audio/wav' }), 'sample.wav');
      const reply = await options.client.json(options.baseUrl, { signal, multipart: body });
      return reply.found ? decodeAudD(reply.body) : null;
    },
  };
}

/** AudD's answer as a match; throws on an error answer. */
export function decodeAudD(raw: unknown): OnlineMatch | null {
  const body = asObject(raw);
  if (body?.status !== 'success') {
    const error = asObject(body?.error);
    throw new Error(`error answer ${asNumber(error?.error_code) ?? '(no code)'}: ${asText(error?.error_message) ?? 'no message'}`);
  }
  const result = asObject(body.result);
  const title = asText(result?.title);
  if (!result || title === undefined) return null;
  const tags: OnlineMatch['tags'] = { title };
  for (const name of ['artist', 'album', 'label'] as const) {
    const value = asText(result[name]);
    if (value !== undefined) tags[name] = value;
  }
  return { tags };
}
