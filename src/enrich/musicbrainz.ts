import { fieldText, fieldTexts, type TrackFields } from '../domain/track';
import { foundFields, logDegraded, type Enricher, type Enrichment, type EnrichmentContext } from './enricher';
import { fieldMbid } from './json-read';
import { chooseRelease, creditText, pickMatch, type Match, type Wanted } from './match';
import { MusicBrainzApi } from './musicbrainz-api';
import type { MbArtist, MbGenre, MbRecording, MbRecordingList, MbRelease } from './musicbrainz-decode';
import type { ServiceDeps } from './service-deps';

// MusicBrainz (docs/enrichment.md): the recording by its MBID, else by ISRC, else by a search on artist and
// title (and album); then the chosen release (label, genres) and the artist (web sites, including
// the Wikidata link the artist providers need).

const MAX_GENRES = 5;

export function createMusicBrainz(deps: ServiceDeps, baseUrl: string): Enricher {
  const api = new MusicBrainzApi(deps, baseUrl);
  return {
    name: 'musicbrainz',
    async enrich(track, { signal }) {
      const match = await findRecording(api, deps, track, signal);
      return match ? describe(api, deps, track, match, { signal }) : null;
    },
  };
}

/**
 * The works of the recording MusicBrainz matched (ISWC, composer, writers), for a play log's
 * rights data (docs/play-log.md "Rights data"). It runs with the artist providers, after the
 * match: a recording found by MBID or ISRC was looked up with its works already, and this asks the
 * lookup cache for the same answer; one found by a search costs one more request, which waits
 * behind nobody's match or cover.
 */
export function createMusicBrainzWorks(deps: ServiceDeps, baseUrl: string): Enricher {
  const api = new MusicBrainzApi(deps, baseUrl);
  return {
    name: 'musicbrainz',
    async enrich(track, { signal }) {
      const recordingId = fieldMbid(track, 'musicbrainzrecordingid');
      const known = ['iswc', 'composer', 'writers'].some((field) => fieldTexts(track, field).length > 0);
      if (recordingId === undefined || known) return null;
      const recording = await api.recording(recordingId, signal);
      if (!recording) return null;
      const { iswc, composer, writers } = rightsFields(undefined, recording);
      return { fields: foundFields({ iswc, composer, writers }) };
    },
  };
}

async function findRecording(api: MusicBrainzApi, deps: ServiceDeps, track: Readonly<TrackFields>, signal: AbortSignal): Promise<Match | undefined> {
  const artist = fieldText(track, 'artist');
  const title = fieldText(track, 'title');
  const album = fieldText(track, 'album');

  const recordingId = fieldMbid(track, 'musicbrainzrecordingid');
  if (recordingId !== undefined) {
    // The submitter (or AcoustID) named the recording: trust it, no guessing.
    return recordingById(api, recordingId, album, signal);
  }

  // One ISRC, or a list of them (What's Now Playing sends a list): the first well-formed one.
  const isrc = fieldTexts(track, 'isrc')
    .map(normalizeIsrc)
    .find((code) => code !== undefined);
  if (isrc !== undefined) {
    const found = (await api.isrc(isrc, signal))?.recordings ?? [];
    // With artist and title at hand the ISRC's recordings must agree with them; without, it decides.
    const match = artist !== undefined && title !== undefined ? pickMatch({ artist, title, album }, found) : found[0] && { recording: found[0], score: 1 };
    // The ISRC names the recording; its releases and their release groups come from its lookup.
    if (match) {
      const full = await recordingById(api, match.recording.id, album, signal).catch((error: unknown) => logFailure(deps, signal, 'recording lookup', error));
      return full ?? match;
    }
  }

  if (artist === undefined || title === undefined) return undefined;
  return search(api, { artist, title, album }, signal);
}

/** Searches with the album first (when given), then without it if that found no release of it. */
async function search(api: MusicBrainzApi, wanted: Wanted, signal: AbortSignal): Promise<Match | undefined> {
  const first = await api.search(wanted, signal);
  const match = first ? matchOnce(wanted, first) : undefined;
  if (wanted.album === undefined || match?.release) return match;
  const broader = await api.search({ artist: wanted.artist, title: wanted.title }, signal);
  const broaderMatch = broader ? matchOnce(wanted, broader) : undefined;
  return broaderMatch?.release ? broaderMatch : (match ?? broaderMatch);
}

// Cached answers are shared objects, so the outcome of matching one can be remembered with it:
// a track seen before is matched once, not on every submission.
const matches = new WeakMap<MbRecordingList, Map<string, Match | undefined>>();

function matchOnce(wanted: Wanted, answer: MbRecordingList): Match | undefined {
  const key = JSON.stringify([wanted.artist, wanted.title, wanted.album ?? null]);
  let byWanted = matches.get(answer);
  if (!byWanted) {
    byWanted = new Map();
    matches.set(answer, byWanted);
  }
  if (!byWanted.has(key)) byWanted.set(key, pickMatch(wanted, answer.recordings));
  return byWanted.get(key);
}

function withRelease(recording: MbRecording, album: string | undefined): Match {
  const release = chooseRelease(recording.releases, album);
  return release ? { recording, release, score: 1 } : { recording, score: 1 };
}

async function recordingById(api: MusicBrainzApi, id: string, album: string | undefined, signal: AbortSignal): Promise<Match | undefined> {
  const recording = await api.recording(id, signal);
  return recording ? withRelease(recording, album) : undefined;
}

async function describe(
  api: MusicBrainzApi,
  deps: ServiceDeps,
  track: Readonly<TrackFields>,
  match: Match,
  { signal }: EnrichmentContext,
): Promise<Enrichment> {
  const { recording, release } = match;
  const credit = recording['artist-credit'] ?? [];
  const artistId = fieldMbid(track, 'musicbrainzartistid') ?? credit[0]?.artist.id;

  // Secondary lookups only add detail: when one fails or the deadline passes, the match stands.
  // Works (ISWC, writers) come with a recording looked up by MBID or ISRC; for a search answer,
  // createMusicBrainzWorks asks later, so that the artist providers need not wait for it.
  const [releaseDetail, artistDetail] = await Promise.all([
    release ? api.release(release.id, signal).catch((error: unknown) => logFailure(deps, signal, 'release lookup', error)) : undefined,
    artistId ? api.artist(artistId, signal).catch((error: unknown) => logFailure(deps, signal, 'artist lookup', error)) : undefined,
  ]);
  const chosen: MbRelease | undefined = releaseDetail ?? release;
  const genres = topGenres([recording.genres, chosen?.['release-group']?.genres, release?.['release-group']?.genres, chosen?.genres, artistDetail?.genres]);

  return {
    fields: foundFields({
      musicbrainzrecordingid: recording.id,
      title: recording.title,
      artist: creditText(credit) || undefined,
      musicbrainzartistid: credit[0]?.artist.id,
      isrc: recording.isrcs?.[0],
      musicbrainzalbumid: release?.id,
      musicbrainzreleasegroupid: (chosen?.['release-group'] ?? release?.['release-group'])?.id,
      album: release?.title,
      date: release?.date ?? recording['first-release-date'],
      label: chosen?.['label-info']?.[0]?.label.name,
      ...rightsFields(chosen, recording),
      genre: genres[0],
      genres,
      artistwebsites: websites(artistDetail ?? undefined),
    }),
  };
}

/** Writer roles of a work's artist relations (MusicBrainz relationship types), in the order they are named. */
const WRITER_ROLES: ReadonlySet<string> = new Set(['composer', 'lyricist', 'writer', 'librettist']);

/**
 * What a licensing report asks for (docs/play-log.md "Rights data"): catalogue number, barcode and
 * release group of the release; ISWC and writers of the recording's work. Names as MusicBrainz spells them.
 */
export function rightsFields(release: MbRelease | undefined, recording: MbRecording): Record<string, string | string[] | undefined> {
  const labelInfo = release?.['label-info']?.find((info) => info['catalog-number'] !== undefined);
  const works = recording.works ?? [];
  const credits = works.flatMap((work) => work.relations ?? []);
  const namesFor = (roles: (type: string) => boolean) => [...new Set(credits.filter((credit) => roles(credit.type)).map((credit) => credit.artist.name))];
  const composers = namesFor((type) => type === 'composer' || type === 'writer');
  return {
    catalognumber: labelInfo?.['catalog-number'],
    barcode: release?.barcode,
    releasegroup: release?.['release-group']?.title,
    iswc: works.flatMap((work) => work.iswcs ?? [])[0],
    composer: composers.length > 0 ? composers.join(', ') : undefined,
    writers: namesFor((type) => WRITER_ROLES.has(type)),
  };
}

function logFailure(deps: ServiceDeps, signal: AbortSignal, what: string, error: unknown): undefined {
  logDegraded(deps.logger, signal, `musicbrainz ${what}`, error);
  return undefined;
}

/** The first non-empty genre list in order of precedence, most voted first. */
function topGenres(lists: readonly (readonly MbGenre[] | undefined)[]): string[] {
  const list = lists.find((candidate) => candidate !== undefined && candidate.length > 0) ?? [];
  return [...list]
    .sort((a, b) => (b.count ?? 0) - (a.count ?? 0))
    .slice(0, MAX_GENRES)
    .map((genre) => genre.name);
}

/** The artist's URL relations (official homepage, Wikidata, social networks, ...), without repeats. */
function websites(artist: MbArtist | undefined): string[] {
  return [...new Set((artist?.relations ?? []).map((relation) => relation.url.resource))];
}

/** ISRCs are written with or without dashes and in any case; MusicBrainz wants CCXXXYYNNNNN. */
function normalizeIsrc(value: string | undefined): string | undefined {
  const compact = value?.replace(/[\s-]/g, '').toUpperCase();
  return compact !== undefined && /^[A-Z]{2}[A-Z0-9]{3}\d{7}$/.test(compact) ? compact : undefined;
}
