import { createHmac } from 'node:crypto';
import { asNumber, asObject, asText, readList } from '../enrich/json-read';
import type { ServiceClient } from '../enrich/http';
import { wavFile, type OnlineIdentifier, type OnlineMatch, type OnlineSample } from './online';

// ACRCloud's identify API as an online recogniser (docs/recognition.md "Online lookups"): a
// multipart POST to `/v1/identify` of the sample as a WAV file with the project's access key,
// signed: HMAC-SHA1 with the access secret over "POST\n/v1/identify\n" + access key + "\n" +
// data type + "\n" + signature version + "\n" + timestamp, in base64. The answer's `status.code`
// is 0 for a match (`metadata.music`, best first, each with a `score` of 0-100), 1001 for none;
// any other code is an error answer (a bad key or signature, a limit reached).

const URI = '/v1/identify';
const NO_RESULT = 1001;

export interface AcrCloudOptions {
  /** The project's host, `https://identify-eu-west-1.acrcloud.com` (or a test's fake). */
  baseUrl: string;
  accessKey: string;
  accessSecret: string;
  client: ServiceClient;
  /** Seconds since the epoch (the signed timestamp). */
  now?: () => number;
}

/** The request's signature, as ACRCloud's identification protocol (version 1) defines it. */
export function acrCloudSignature(accessSecret: string, accessKey: string, timestamp: string): string {
  const text = ['POST', URI, accessKey, 'audio', '1', timestamp].join('\n');
  return createHmac('sha1', accessSecret).update(text).digest('base64');
}

export function createAcrCloudLookup(options: AcrCloudOptions): OnlineIdentifier {
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  return {
    service: 'acrcloud',
    async identify(sample: OnlineSample, signal: AbortSignal): Promise<OnlineMatch | null> {
      const wav = wavFile(sample);
      const timestamp = String(now());
      const body = new FormData();
      body.set('access_key', options.accessKey);
      body.set('data_type', 'audio');
      body.set('signature_version', '1');
      body.set('timestamp', timestamp);
      body.set('signature', acrCloudSignature(options.accessSecret, options.accessKey, timestamp));
      body.set('sample_bytes', String(wav.length));
      body.set('sample', new Blob([wav], { type: 'audio/wav' }), 'sample.wav');
      const reply = await options.client.json(`${options.baseUrl}${URI}`, { signal, multipart: body });
      return reply.found ? decodeAcrCloud(reply.body) : null;
    },
  };
}

/** ACRCloud's answer as a match; throws on an error answer. */
export function decodeAcrCloud(raw: unknown): OnlineMatch | null {
  const status = asObject(asObject(raw)?.status);
  const code = asNumber(status?.code);
  if (code === NO_RESULT) return null;
  if (code !== 0) throw new Error(`error answer ${code ?? '(no code)'}: ${asText(status?.msg) ?? 'no message'}`);
  const music = readList(asObject(asObject(raw)?.metadata)?.music, asObject);
  const best = music[0];
  if (!best) return null;
  const tags: OnlineMatch['tags'] = {};
  const artist = readList(best.artists, (item) => asText(asObject(item)?.name)).join(', ');
  if (artist !== '') tags.artist = artist;
  const title = asText(best.title);
  if (title !== undefined) tags.title = title;
  const album = asText(asObject(best.album)?.name);
  if (album !== undefined) tags.album = album;
  const label = asText(best.label);
  if (label !== undefined) tags.label = label;
  const isrc = asText(asObject(best.external_ids)?.isrc);
  if (isrc !== undefined) tags.isrc = isrc;
  if (tags.title === undefined) return null;
  const score = asNumber(best.score);
  const duration = asNumber(best.duration_ms);
  const offset = asNumber(best.play_offset_ms);
  return {
    tags,
    ...(score !== undefined ? { score: Math.max(0, Math.min(1, score / 100)) } : {}),
    ...(duration !== undefined && offset !== undefined && duration > offset ? { remainingSeconds: (duration - offset) / 1000 } : {}),
  };
}
