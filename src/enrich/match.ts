import { VARIOUS_ARTISTS_ID, type MbArtistCredit, type MbRecording, type MbRelease } from './musicbrainz-decode';
import { editDistance } from '../domain/edit-distance';

// Which search result is the submitted track, and which of its releases is "the album"
// (docs/enrichment.md). No wrong metadata is better than bad metadata: below MIN_SIMILARITY
// nothing matches. Pure: no I/O.

/** Artist and title must each be at least this similar (0..1) after normalising. */
const MIN_SIMILARITY = 0.85;
/** The similarity given to titles that only agree once bracketed parts ("(Radio Edit)") are removed. */
const BRACKETS_REMOVED_WEIGHT = 0.9;

const BRACKETED_FEATURING = /\s*[([]\s*(?:feat\.?|ft\.?|featuring|with)\s[^)\]]*[)\]]/giu;
const TRAILING_FEATURING = /\s+(?:feat\.?|ft\.?|featuring)\s.*$/iu;
const BRACKETED = /\s*[([][^)\]]*[)\]]/gu;
const DASH_SUFFIX = /\s+-\s+.*$/u;

/** Lower case, no accents, no "feat." parts, no punctuation, single spaces, no leading "the". */
export function normalize(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(BRACKETED_FEATURING, ' ')
    .replace(TRAILING_FEATURING, '')
    .replace(/['\u2019`\u00b4]/gu, '')
    .replace(/&|\+/gu, ' and ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .replace(/^the\s+/u, '');
}

/** 1 for equal strings, down to 0, from the edit distance of the normalised forms. */
export function similarity(a: string, b: string): number {
  const x = normalize(a);
  const y = normalize(b);
  if (x === y) return x === '' ? 0 : 1;
  const longest = Math.max(x.length, y.length);
  return longest === 0 ? 0 : 1 - editDistance(x, y) / longest;
}

function titleSimilarity(wanted: string, candidate: string): number {
  const strip = (text: string) => text.replace(BRACKETED_FEATURING, ' ').replace(BRACKETED, ' ').replace(DASH_SUFFIX, '');
  return Math.max(similarity(wanted, candidate), BRACKETS_REMOVED_WEIGHT * similarity(strip(wanted), strip(candidate)));
}

/** The credit as MusicBrainz prints it: names and join phrases ("A feat. B"). */
export function creditText(credit: readonly MbArtistCredit[] | undefined): string {
  return (credit ?? [])
    .map((part) => part.name + (part.joinphrase ?? ''))
    .join('')
    .trim();
}

function artistSimilarity(wanted: string, credit: readonly MbArtistCredit[] | undefined): number {
  if (!credit || credit.length === 0) return 0;
  const forms = [creditText(credit), credit.map((part) => part.name).join(' & '), ...credit.map((part) => part.name)];
  return Math.max(...forms.map((form) => similarity(wanted, form)));
}

export interface Wanted {
  artist: string;
  title: string;
  album?: string;
}

export interface RecordingScore {
  title: number;
  artist: number;
  /** The weaker of the two: a match needs both. */
  score: number;
}

function scoreRecording(wanted: Wanted, recording: MbRecording): RecordingScore {
  const title = titleSimilarity(wanted.title, recording.title);
  const artist = artistSimilarity(wanted.artist, recording['artist-credit']);
  return { title, artist, score: Math.min(title, artist) };
}

function isVariousArtists(release: MbRelease): boolean {
  return (release['artist-credit'] ?? []).some((part) => part.artist.id === VARIOUS_ARTISTS_ID || normalize(part.name) === 'various artists');
}

/**
 * How much a release looks like "the album" of a track: an official album by the artist beats
 * singles, and compilations, live albums and "Various Artists" releases come last. When an
 * album name was submitted, only releases of that name count (undefined otherwise).
 */
function rankRelease(release: MbRelease, wantedAlbum?: string): number | undefined {
  let rank = 0;
  if (wantedAlbum !== undefined) {
    const albumSimilarity = titleSimilarity(wantedAlbum, release.title);
    if (albumSimilarity < MIN_SIMILARITY) return undefined;
    rank += 100 * albumSimilarity;
  }
  rank += { official: 30, promotion: 5, bootleg: -30, 'pseudo-release': -20 }[(release.status ?? '').toLowerCase()] ?? 0;
  const group = release['release-group'];
  rank += { album: 20, ep: 12, single: 10, broadcast: 0, other: 0 }[(group?.['primary-type'] ?? '').toLowerCase()] ?? 0;
  for (const secondary of group?.['secondary-types'] ?? []) {
    rank += { compilation: -40, live: -15, remix: -15, 'dj-mix': -20, mixtape: -10, soundtrack: -5, demo: -10 }[secondary.toLowerCase()] ?? -5;
  }
  if (isVariousArtists(release)) rank -= 40;
  return rank;
}

/** The best release of a recording for this submission, or undefined when none qualifies. */
export function chooseRelease(releases: readonly MbRelease[] | undefined, wantedAlbum?: string): MbRelease | undefined {
  let best: { release: MbRelease; rank: number } | undefined;
  for (const release of releases ?? []) {
    const rank = rankRelease(release, wantedAlbum);
    if (rank === undefined) continue;
    if (!best || rank > best.rank || (rank === best.rank && earlier(release.date, best.release.date))) best = { release, rank };
  }
  return best?.release;
}

export interface Match {
  recording: MbRecording;
  /** Undefined when the recording has no release that qualifies (e.g. none of the submitted album). */
  release?: MbRelease;
  score: number;
}

/**
 * The recording that is the submitted track and its best release. Recordings below the
 * threshold never match; among the rest a closer title wins first, then the better release.
 */
export function pickMatch(wanted: Wanted, recordings: readonly MbRecording[]): Match | undefined {
  let best: { match: Match; key: number[] } | undefined;
  for (const recording of recordings) {
    const { score } = scoreRecording(wanted, recording);
    if (score < MIN_SIMILARITY) continue;
    const release = chooseRelease(recording.releases, wanted.album);
    const releaseRank = release ? (rankRelease(release, wanted.album) ?? -1000) : -1000;
    const key = [Math.round(score * 20), releaseRank, recording.score ?? 0];
    if (!best || compareKeys(key, best.key) > 0) best = { match: release ? { recording, release, score } : { recording, score }, key };
  }
  return best?.match;
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i += 1) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** True when date `a` is known and before `b` (or `b` is unknown). MusicBrainz dates are YYYY[-MM[-DD]]. */
function earlier(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined) return false;
  if (b === undefined) return true;
  return a < b;
}
