import { createHash } from 'node:crypto';
import { weightedRatio } from './fuzzy-ratio';

// Song requests (docs/song-requests.md): the queue What's Now Playing's request API speaks, the
// identity of a requested track, how a chat line is read as artist and title, and which request a
// played track fulfils. Pure.

/** A request in the queue, as stored. */
export interface SongRequest {
  id: number;
  requester: string;
  artist: string | null;
  title: string | null;
  /** normaliseName(artist) and normaliseName(title), kept for matching. */
  normalizedArtist: string;
  normalizedTitle: string;
  /** `lumia` for the API (What's Now Playing's name for requests that come over HTTP), else the client's name. */
  origin: string;
  userPlatform: string | null;
  externalId: string | null;
  /** The chat text it was read from, when it came as `query`. */
  userInput: string | null;
  /** `for @someone` in the chat text. */
  requestedFor: string | null;
  /** ms since the epoch. */
  createdAt: number;
}

export type NewSongRequest = Omit<SongRequest, 'id'>;

/** A duplicate from one requester within this window is not queued again (What's Now Playing's 30 s). */
export const REQUEST_DEDUPE_MS = 30_000;
/** At most this many requests wait in the queue; past it a new one is refused. */
export const MAX_QUEUED_REQUESTS = 1000;
/** At most this many requests of one requester wait at once (one viewer never fills the queue). */
export const MAX_WAITING_PER_REQUESTER = 10;
/** The window of the queue's intake: at most MAX_REQUESTS_PER_WINDOW new requests (all requesters together) per window. */
export const REQUEST_WINDOW_MS = 60_000;
export const MAX_REQUESTS_PER_WINDOW = 120;
/** Fuzzy scoring takes at most this many queued requests before the matcher yields (a long queue never freezes a track change). */
export const FUZZY_SLICE = 25;
/** Chat text longer than this is cut before it is read (What's Now Playing cuts at 500). */
export const MAX_REQUEST_INPUT = 500;
/** A request field (requester, artist, title, ...) is cut to this many characters. */
export const MAX_REQUEST_FIELD = 200;
/** The lowest fuzzy score (0-100) that fulfils a request (What's Now Playing's default threshold). */
export const FUZZY_THRESHOLD = 85;

/** Letters that NFKD leaves alone but a reader sees as Latin ones. */
const LOOKALIKES: Readonly<Record<string, string>> = { Λ: 'A', Δ: 'A', Ө: 'O', Я: 'R', '†': 'T', λ: 'a', δ: 'a', ө: 'o', я: 'r' };

/**
 * A name as requests compare it: lookalike letters and smart quotes replaced, accents dropped, lower
 * case, punctuation and spaces removed ("Sigur Rós" and "sigur ros" are one name). '' for nothing.
 */
export function normaliseName(text: string | null | undefined): string {
  if (!text) return '';
  const replaced = [...text].map((char) => LOOKALIKES[char] ?? char).join('');
  const folded = replaced
    .replace(/[\u2018\u2019]/gu, "'")
    .replace(/[\u201c\u201d]/gu, '"')
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  return folded.replace(/[^\p{L}\p{N}]+/gu, '');
}

/** The id a request's track is known by to chat tools: SHA-256 (hex) of `normalised artist|normalised title`. */
export function requestTrackId(artist: string | null | undefined, title: string | null | undefined): string {
  return createHash('sha256')
    .update(`${normaliseName(artist)}|${normaliseName(title)}`, 'utf8')
    .digest('hex');
}

export interface ReadRequest {
  artist: string | null;
  title: string | null;
  requestedFor: string | null;
}

const ARTIST_TITLE = /^(.*?) -+ "?(.*?)"?(?: for @(\S+))?$/u;
// WNP's separator here is the character class `[-by]+`: any run of '-', 'b' and 'y'.
const TITLE_ARTIST = /^"(.*?)" [-by]+ (.*?)(?: for @(\S+))?$/u;
const TITLE_ONLY = /^"(.*?)"\s*(?:for @(\S+))?$/u;

/**
 * A chat line read as a request, the forms What's Now Playing reads: `artist - title`,
 * `artist - "title"`, `"title" - artist`, `"title" by artist`, `"title"`, or a bare artist; each
 * may end with `for @someone`.
 */
export function readRequestText(input: string): ReadRequest {
  let text = [...input].slice(0, MAX_REQUEST_INPUT).join('');
  // A single hyphen without spaces ("Artist-Title") separates too.
  if ((text.match(/-/gu) ?? []).length === 1) text = text.replace('-', ' - ');
  // `"Weird Al"` (any case) is read as Weird Al, so its quotes are not taken for a title's, and
  // given back to the artist: `"Weird Al" Yankovic - Amish Paradise` is that artist and title.
  text = text.replace(WEIRD_AL, 'Weird Al');
  text = text.replace(/\s+/gu, ' ').trim();
  const artistTitle = text.startsWith('"') ? null : ARTIST_TITLE.exec(text);
  if (artistTitle) return { artist: weirdAl(blankToNull(artistTitle[1])), title: blankToNull(artistTitle[2]), requestedFor: artistTitle[3] ?? null };
  const titleArtist = TITLE_ARTIST.exec(text);
  if (titleArtist) return { title: blankToNull(titleArtist[1]), artist: weirdAl(blankToNull(titleArtist[2])), requestedFor: titleArtist[3] ?? null };
  const titleOnly = TITLE_ONLY.exec(text);
  if (titleOnly) return { artist: null, title: blankToNull(titleOnly[1]), requestedFor: titleOnly[2] ?? null };
  return { artist: weirdAl(blankToNull(text)), title: null, requestedFor: null };
}

const WEIRD_AL = /"weird al"/giu;

/** What's Now Playing puts the quotes back on every Weird Al of the artist it read. */
function weirdAl(artist: string | null): string | null {
  return artist === null ? null : artist.replace(/Weird Al/gu, '"Weird Al"');
}

function blankToNull(text: string | undefined): string | null {
  const trimmed = text?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

/** The played track's names. */
export interface PlayedNames {
  artist?: string | undefined;
  title?: string | undefined;
}

/**
 * The request a played track fulfils, oldest first within each rule: the same artist and title as
 * typed, else the same normalised names, else the best fuzzy match scoring FUZZY_THRESHOLD or more.
 * Like What's Now Playing, a track with both names tries both, then the artist alone, then the
 * title alone.
 */
export function requestFulfilledBy(played: PlayedNames, queue: readonly SongRequest[]): SongRequest | undefined {
  const steps = fulfilmentSteps(played, queue);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * requestFulfilledBy's search in slices: the generator yields after every FUZZY_SLICE fuzzy scores
 * (the caller may let other work run there) and returns the request found.
 */
export function* fulfilmentSteps(played: PlayedNames, queue: readonly SongRequest[]): Generator<void, SongRequest | undefined> {
  const artist = played.artist || undefined;
  const title = played.title || undefined;
  const attempts: PlayedNames[] = [];
  if (artist && title) attempts.push({ artist, title });
  if (artist) attempts.push({ artist });
  if (title) attempts.push({ title });
  for (const attempt of attempts) {
    const found = exactMatch(attempt, queue) ?? normalisedMatch(attempt, queue) ?? (yield* fuzzyMatch(attempt, queue));
    if (found) return found;
  }
  return undefined;
}

function exactMatch(played: PlayedNames, queue: readonly SongRequest[]): SongRequest | undefined {
  return queue.find((request) => sameText(request.artist, played.artist) && sameText(request.title, played.title));
}

/** SQL's `=` on What's Now Playing's NOCASE columns: case aside, the same text; a name not given matches only an empty one. */
function sameText(requested: string | null, played: string | undefined): boolean {
  return (requested ?? '').toLowerCase() === (played ?? '').toLowerCase();
}

function normalisedMatch(played: PlayedNames, queue: readonly SongRequest[]): SongRequest | undefined {
  const artist = normaliseName(played.artist);
  const title = normaliseName(played.title);
  return queue.find((request) => request.normalizedArtist === artist && request.normalizedTitle === title);
}

function* fuzzyMatch(played: PlayedNames, queue: readonly SongRequest[]): Generator<void, SongRequest | undefined> {
  let best: SongRequest | undefined;
  let bestScore = 0;
  let scored = 0;
  for (const request of queue) {
    if (!canReachThreshold(played, request)) continue;
    if (scored > 0 && scored % FUZZY_SLICE === 0) yield;
    scored++;
    const score = fuzzyScore(played, request);
    if (score > bestScore && score >= FUZZY_THRESHOLD) {
      best = request;
      bestScore = score;
    }
  }
  return best;
}

/** Words people add to a request that are not part of any name. */
const FILLER =
  /\b(?:play|anything by|something by|please|thanks?|ty|thank you|can you play|could you play|would you play|i want|i would like|i request|request for|how about)\b/giu;

/** 0-100: artist 40 % and title 60 % when both sides have both, else whichever name both have. */
export function fuzzyScore(played: PlayedNames, request: Pick<SongRequest, 'artist' | 'title'>): number {
  const artistScore = played.artist && request.artist ? nameScore(played.artist, request.artist) : 0;
  const titleScore = played.title && request.title ? nameScore(played.title, request.title) : 0;
  if (played.artist && played.title && request.artist && request.title) return Math.floor(artistScore * 0.4 + titleScore * 0.6);
  if (played.artist && request.artist) return Math.floor(artistScore);
  if (played.title && request.title) return Math.floor(titleScore);
  return 0;
}

/**
 * False only when fuzzyScore(played, request) is sure to stay below FUZZY_THRESHOLD without scoring:
 * a name more than twice as long as the other (played and its core text both) scores below 50, and
 * one such name keeps the total below 85 (0.4 x 49 + 60 = 79; 40 + 0.6 x 49 = 69). A queue of
 * long names made up to slow the match is skipped at the cost of their lengths.
 */
export function canReachThreshold(played: PlayedNames, request: Pick<SongRequest, 'artist' | 'title'>): boolean {
  const artist = played.artist && request.artist ? nameCanReach(played.artist, request.artist) : undefined;
  const title = played.title && request.title ? nameCanReach(played.title, request.title) : undefined;
  if (artist !== undefined && title !== undefined) return artist && title;
  return artist ?? title ?? false;
}

function nameCanReach(played: string, requested: string): boolean {
  return !lengthPenalised(played, requested) || !lengthPenalised(coreText(played), requested);
}

/** trackrequests.py `_extract_core_text`: lowercased, the filler words taken out, spaces collapsed; the name itself when nothing is left. */
function coreText(played: string): string {
  return played.toLowerCase().replace(FILLER, '').replace(/\s+/gu, ' ').trim() || played;
}

function nameScore(played: string, requested: string): number {
  return Math.max(similarity(played, requested), similarity(coreText(played), requested));
}

/** The length similarity compares: code points of the lowercased, trimmed name. */
function comparedLength(name: string): number {
  return [...name.toLowerCase().trim()].length;
}

/** Whether similarity cuts its score for length: one name more than twice as long as the other. */
function lengthPenalised(a: string, b: string): boolean {
  const shorter = Math.min(comparedLength(a), comparedLength(b));
  const longer = Math.max(comparedLength(a), comparedLength(b));
  return shorter > 0 && longer / shorter > 2;
}

/**
 * 0-100 similarity of two names as What's Now Playing scores them (trackrequests.py
 * `_calculate_similarity_with_length_penalty`): rapidfuzz's WRatio of the lowercased names
 * (fuzzy-ratio.ts), cut to a whole number times shorter / longer when one is more than twice as
 * long as the other (so "a" is not "abba").
 */
export function similarity(a: string, b: string): number {
  const left = a.toLowerCase();
  const right = b.toLowerCase();
  if (left === '' || right === '') return 0;
  const score = weightedRatio(left, right);
  const shorter = Math.min(comparedLength(left), comparedLength(right));
  const longer = Math.max(comparedLength(left), comparedLength(right));
  return lengthPenalised(left, right) ? Math.floor(score * (shorter / longer)) : score;
}
