import { createHash } from 'node:crypto';
import { fieldText } from '../domain/track';
import { foundFields, type Enricher } from './enricher';
import { asMbid, asNumber, asObject, asText, fieldMbid, readList } from './json-read';
import type { ServiceDeps } from './service-deps';

// AcoustID (docs/enrichment.md; recognition, needs an application key): a submission carrying
// `fpcalcfingerprint` and `fpcalcduration` is identified (`/v2/lookup`, meta=recordings) and the
// recording id handed on to MusicBrainz, which runs in the next stage.

const SERVICE = 'acoustid';
/** AcoustID's own confidence (0..1) below which a result is not trusted. */
const MIN_ACOUSTID_SCORE = 0.8;

export interface AcoustIdArtist {
  id: string;
  name: string;
  joinphrase?: string;
}

export interface AcoustIdRecording {
  id: string;
  title?: string;
  artists?: AcoustIdArtist[];
}

export interface AcoustIdResult {
  id: string;
  score: number;
  recordings?: AcoustIdRecording[];
}

/** AcoustID's own shape: `{status: "ok", results: [...]}`. */
export interface AcoustIdAnswer {
  status: 'ok';
  results: AcoustIdResult[];
}

export interface AcoustIdOptions {
  baseUrl: string;
  apiKey: string;
}

export function createAcoustId(deps: ServiceDeps, options: AcoustIdOptions): Enricher {
  return {
    name: SERVICE,
    async enrich(track, { signal }) {
      const fingerprint = fieldText(track, 'fpcalcfingerprint');
      const duration = typeof track.fpcalcduration === 'number' ? Math.round(track.fpcalcduration) : undefined;
      // A recording id already names the track: nothing to recognise.
      if (fingerprint === undefined || duration === undefined || duration <= 0 || fieldMbid(track, 'musicbrainzrecordingid')) return null;

      const answer = await deps.lookups.get(
        {
          service: SERVICE,
          key: `lookup?duration=${duration}&fingerprint-sha256=${createHash('sha256').update(fingerprint).digest('hex')}`,
          decode: decodeAnswer,
          fetch: async (flightSignal) => {
            // POST: fingerprints are kilobytes long, too long for a URL (AcoustID accepts both).
            const form = new URLSearchParams({ client: options.apiKey, meta: 'recordings', duration: String(duration), fingerprint, format: 'json' });
            const reply = await deps.client.json(`${options.baseUrl}/lookup`, { signal: flightSignal, form });
            return reply.found ? reply.body : undefined;
          },
        },
        signal,
      );
      const best = bestRecording(answer?.results ?? []);
      if (!best) return null;
      const { result, recording } = best;
      const artists = recording.artists ?? [];
      return {
        fields: foundFields({
          musicbrainzrecordingid: recording.id,
          acoustid: result.id,
          title: recording.title,
          artist: artistCredit(artists),
          musicbrainzartistid: artists[0]?.id,
        }),
      };
    },
  };
}

/** The artists as one credit: their join phrases, else ' & ' between them; undefined when there are none. */
export function artistCredit(artists: readonly AcoustIdArtist[]): string | undefined {
  return artists.map((artist, index) => artist.name + (artist.joinphrase ?? (index < artists.length - 1 ? ' & ' : ''))).join('') || undefined;
}

/** The highest-scoring result above the threshold that names a recording. */
export function bestRecording(results: readonly AcoustIdResult[]): { result: AcoustIdResult; recording: AcoustIdRecording } | undefined {
  const ranked = [...results].filter((result) => result.score >= MIN_ACOUSTID_SCORE).sort((a, b) => b.score - a.score);
  for (const result of ranked) {
    const recording = result.recordings?.find((candidate) => candidate.title !== undefined) ?? result.recordings?.[0];
    if (recording) return { result, recording };
  }
  return undefined;
}

export function decodeAnswer(raw: unknown): AcoustIdAnswer | null {
  const body = asObject(raw);
  if (!body) throw new Error('not a JSON object');
  if (body.status !== 'ok') {
    const message = asText(asObject(body.error)?.message) ?? 'status is not "ok"';
    throw new Error(`error answer: ${message}`);
  }
  const results = readList(body.results, (item): AcoustIdResult | undefined => {
    const entry = asObject(item);
    const id = asText(entry?.id);
    const score = asNumber(entry?.score);
    if (!entry || id === undefined || score === undefined) return undefined;
    const recordings = readList(entry.recordings, decodeRecording);
    return recordings.length > 0 ? { id, score, recordings } : { id, score };
  });
  return results.length > 0 ? { status: 'ok', results } : null;
}

function decodeRecording(value: unknown): AcoustIdRecording | undefined {
  const entry = asObject(value);
  const id = asMbid(entry?.id);
  if (!entry || id === undefined) return undefined;
  const artists = readList(entry.artists, (item): AcoustIdArtist | undefined => {
    const artist = asObject(item);
    const artistId = asMbid(artist?.id);
    const name = asText(artist?.name);
    if (!artist || artistId === undefined || name === undefined) return undefined;
    return typeof artist.joinphrase === 'string' ? { id: artistId, name, joinphrase: artist.joinphrase } : { id: artistId, name };
  });
  const title = asText(entry.title);
  return { id, ...(title !== undefined ? { title } : {}), ...(artists.length > 0 ? { artists } : {}) };
}
