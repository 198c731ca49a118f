import { artistCredit, bestRecording, decodeAnswer } from '../enrich/acoustid';
import type { ServiceClient } from '../enrich/http';
import type { OnlineIdentifier, OnlineMatch, OnlineSample } from './online';

// AcoustID's lookup as an online recogniser (docs/recognition.md "Online lookups"): the sample's
// compressed Chromaprint fingerprint and its length in seconds, POSTed as a form to `/lookup`
// with the application's key (`client`) and `meta=recordings`. The answer is read by the one
// decoder of AcoustID answers (src/enrich/acoustid.ts); its result score is the match's score.

export interface AcoustIdLookupOptions {
  /** `https://api.acoustid.org/v2` (or a test's fake). */
  baseUrl: string;
  apiKey: string;
  client: ServiceClient;
  /** The compressed fingerprint of the sample's PCM and its length (fpcalc without -raw). */
  fingerprint: (pcm: Buffer) => Promise<{ fingerprint: string; duration: number }>;
}

export function createAcoustIdLookup(options: AcoustIdLookupOptions): OnlineIdentifier {
  return {
    service: 'acoustid',
    async identify(sample: OnlineSample, signal: AbortSignal): Promise<OnlineMatch | null> {
      const { fingerprint, duration } = await options.fingerprint(Buffer.from(sample.pcm.buffer, sample.pcm.byteOffset, sample.pcm.byteLength));
      const form = new URLSearchParams({ client: options.apiKey, meta: 'recordings', duration: String(duration), fingerprint, format: 'json' });
      const reply = await options.client.json(`${options.baseUrl}/lookup`, { signal, form });
      if (!reply.found) return null;
      const best = bestRecording(decodeAnswer(reply.body)?.results ?? []);
      if (!best) return null;
      const { recording, result } = best;
      const tags: OnlineMatch['tags'] = { musicbrainzrecordingid: recording.id };
      const artist = artistCredit(recording.artists ?? []);
      if (artist !== undefined) tags.artist = artist;
      if (recording.title !== undefined) tags.title = recording.title;
      return { tags, score: result.score };
    },
  };
}
