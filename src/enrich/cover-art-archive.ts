import { isHttpUrl } from '../domain/http-url';
import type { Enricher } from './enricher';
import { asMbid, asObject, asText } from './json-read';
import type { ServiceDeps } from './service-deps';

// Cover Art Archive (docs/enrichment.md): the front cover of the chosen release, else of its release group.
// `/release/{mbid}/front-1200` answers 307 to the image host (archive.org); svc keeps that
// location as the cover candidate, and the image store downloads it. 404 means "no cover".

const SERVICE = 'coverartarchive';
/** 1200 px thumbnails exist for every image and are plenty for an overlay; originals can be huge. */
const SIZE = 'front-1200';

interface CoverLocation {
  location: string;
}

export function createCoverArtArchive(deps: ServiceDeps, baseUrl: string): Enricher {
  const front = (kind: 'release' | 'release-group', id: string, signal: AbortSignal) =>
    deps.lookups.get<CoverLocation>(
      {
        service: SERVICE,
        key: `${kind}/${id}/${SIZE}`,
        decode: decodeLocation,
        fetch: async (flightSignal) => {
          const answer = await deps.client.redirect(`${baseUrl}/${kind}/${id}/${SIZE}`, { signal: flightSignal });
          return answer.found ? { location: answer.location } : undefined;
        },
      },
      signal,
    );

  return {
    name: SERVICE,
    async enrich(track, { signal }) {
      const releaseId = asMbid(track.musicbrainzalbumid);
      const groupId = asMbid(track.musicbrainzreleasegroupid);
      const cover = (releaseId ? await front('release', releaseId, signal) : null) ?? (groupId ? await front('release-group', groupId, signal) : null);
      return cover ? { images: [{ category: 'cover', url: cover.location, source: SERVICE }] } : null;
    },
  };
}

function decodeLocation(value: unknown): CoverLocation | null {
  const location = asText(asObject(value)?.location);
  if (location === undefined || !isHttpUrl(location)) throw new Error('redirect to a non-HTTP location');
  return { location };
}
