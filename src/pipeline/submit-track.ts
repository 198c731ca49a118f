import { deadlineSignal, withDeadline } from '../signals';
import type { CoversInFlight } from '../domain/covers-in-flight';
import { coverUrlFor, keyOfCoverUrl } from '../domain/image';
import type { ImageIntake, KnownImage, StoredCover } from '../domain/image-intake';
import { fieldText, type ImageCandidate, type TrackFields, type TrackRecord } from '../domain/track';
import { isSamePlay } from './same-play';
import type { ChannelRules } from '../domain/channels';
import type { EnrichmentPlan } from '../enrich/enricher';
import { runEnrichers } from '../enrich/run-enrichers';
import { AppError, errorMessage } from '../errors';
import type { Logger } from '../log';
import type { NewTrack, TrackStore } from '../store/tracks';
import { authenticate } from './authenticate';
import type { NowPlaying } from '../domain/current-track';
import { knownBeforeAnnounce, withKnown } from './known-at-announce';
import { parseSubmission, type RawRequest } from './parse';
import { takePlay } from './play-fields';
import type { PlayLogPort } from '../playlog/port';
import { RecordUpdates, type RecordsInProgress, type UpdateClock } from './record-updates';
import type { SongRequests } from '../requests/song-requests';
import { sanitize } from './sanitize';
import { requireIdentifyingField } from './validate';

// The /v1/remoteinput use case, told in the order of the contract (docs/title-first.md):
// parse -> authenticate -> sanitize -> validate -> store and announce -> enrich -> update ->
// respond. Everything refused is refused before the store; the bare record is on every screen
// before any outside service is asked, and enrichment fills it in through one update path.

export interface SubmitDeps {
  /** Told each submission's outcome: stored, or the error code that refused it (docs/running.md "Metrics"). */
  counted?: (outcome: string) => void;
  secret: string;
  maxFields: number;
  maxFieldLength: number;
  maxListItems: number;
  maxRecordBytes: number;
  /** The clock of a record's update spacing (pipeline/record-updates.ts); tests move it by hand. */
  updateClock?: UpdateClock;
  processingTimeoutSeconds: number;
  enrichmentDeadlineSeconds: number;
  /** The same artist and title as the current track within this many seconds is the same play (0: off). */
  dedupeSeconds: number;
  plan: EnrichmentPlan;
  tracks: TrackStore;
  nowPlaying: NowPlaying;
  logger: Logger;
  /** Where images go; without it a submitted `coverurl` is dropped and no image is fetched. */
  images?: ImageIntake;
  /** Records being enriched here: a repeat of the same play joins its enrichment (without it, it answers with what is stored). */
  inProgress?: RecordsInProgress;
  /** Records whose cover is being looked for, so an image request can wait for it (docs/decisions.md "Complete frames"). */
  coversInFlight?: CoversInFlight;
  /** The song-request queue: a new record fulfils the request it matches, and names its requester. */
  songRequests?: Pick<SongRequests, 'fulfil'>;
  /** The play log's rules and bookkeeping (docs/play-log.md); without it the defaults apply and nothing ends by itself. */
  playLog?: PlayLogPort;
  /** The declared channels (docs/channels.md); without them a submission's `channel` is kept as given. */
  channels?: ChannelRules;
  /** A channel's current record, for "the same track twice" (without it: the current track, whatever its channel). */
  currentOn?: (channel: string) => TrackRecord | null;
}

/** Part of processingTimeoutSeconds a submitted cover may take (the fetcher's own limit is 10 s). */
const COVER_SHARE_OF_BUDGET = 0.8;

export interface SubmitResult {
  dbid: number;
  processed_metadata: TrackFields;
  warnings?: string[];
}

/** What a submission has put on screen, so a 408 can take it back. */
interface Announced {
  record?: TrackRecord;
  /** The current track before it (null: nothing was playing). */
  previous: TrackRecord | null;
  updates?: RecordUpdates;
}

/** `idempotencyKey`: the request's Idempotency-Key, given the dbid in the record's own transaction. */
export async function submitTrack(request: RawRequest, receivedSeq: number, deps: SubmitDeps, idempotencyKey?: string): Promise<SubmitResult> {
  if (!deps.counted) return submitUncounted(request, receivedSeq, deps, idempotencyKey);
  try {
    const result = await submitUncounted(request, receivedSeq, deps, idempotencyKey);
    deps.counted('stored');
    return result;
  } catch (error) {
    deps.counted(error instanceof AppError ? error.code : 'error');
    throw error;
  }
}

async function submitUncounted(request: RawRequest, receivedSeq: number, deps: SubmitDeps, idempotencyKey?: string): Promise<SubmitResult> {
  const receivedAt = new Date().toISOString();
  const { fields: rawFields, credential } = parseSubmission(request, deps);
  authenticate(credential, deps.secret);
  const sanitized = sanitize(rawFields, deps);
  const { submittedCoverUrl, recognitionInput } = sanitized;
  requireIdentifyingField(sanitized.fields);
  const { metadata: fields, play, warnings: playWarnings } = takePlay(sanitized.fields, receivedAt, deps.playLog?.policy);
  const warnings = [...sanitized.warnings, ...playWarnings];
  const choice = deps.channels?.resolve(fieldText(sanitized.fields, 'channel'));
  if (choice) {
    play.channel = choice.channel;
    if (choice.warning) {
      warnings.push(choice.warning);
      deps.logger.warn(`submission: ${choice.warning}`);
    }
  }

  // Only a play on the same channel is the same play (docs/title-first.md "The same track twice").
  const current = deps.currentOn ? deps.currentOn(play.channel) : deps.nowPlaying.current();
  const announced: Announced = { previous: null };
  let record: TrackRecord;
  try {
    record = await withProcessingTimeout(deps.processingTimeoutSeconds, async (signal) => {
      if (isSamePlay(current, fields, Date.parse(receivedAt), deps.dedupeSeconds)) {
        return samePlay(current, fields, submittedCoverUrl, warnings, signal, deps);
      }
      const submitted = { ...fields };
      // `coverurl` only ever names an image in our store (docs/decisions.md: never echoed): it comes back with the cover.
      delete submitted.coverurl;
      const known = await knownBeforeAnnounce({ ...submitted, ...recognitionInput }, deps);
      const metadata = withKnown(submitted, known, deps.maxRecordBytes);
      const track = { receivedSeq, receivedAt, metadata, play, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) };
      const stored = await storeAndAnnounce(track, known.images, announced, signal, deps);
      // Only a start the DJ software gave is news: an arrival time moved past a play stored meanwhile is the rule.
      if (sanitized.fields.started_at !== undefined && stored.play && stored.play.startedAt !== play.startedAt) {
        warnings.push(`started_at ${play.startedAt} is before the start of the previous play on channel "${play.channel}"; ${stored.play.startedAt} is used`);
      }
      const updates = new RecordUpdates(stored, deps);
      announced.updates = updates;
      const coverFound = lookingForCover(stored, deps);
      const artistImagesFound = lookingForArtistImages(stored, deps);
      const fulfilled = fulfilRequest(updates, deps);
      const enriched = enrich(updates, { ...fields, ...recognitionInput }, submittedCoverUrl, warnings, signal, deps, {
        cover: coverFound,
        artist: artistImagesFound,
      });
      // A failed enrichment ends the artist search too (ending it twice is harmless).
      enriched.catch(artistImagesFound);
      deps.inProgress?.add(updates, enriched);
      await enriched.finally(coverFound);
      await fulfilled;
      const settled = await updates.settled();
      await deps.nowPlaying.settle(settled);
      warnings.push(...(await complementWarnings(settled, deps)));
      return settled;
    });
  } catch (error) {
    if (error instanceof AppError && error.code === 'PROCESSING_TIMEOUT') retract(announced, deps);
    throw error;
  }

  const result: SubmitResult = { dbid: record.dbid, processed_metadata: record.metadata };
  if (warnings.length > 0) result.warnings = warnings;
  return result;
}

/** The performance complement as the play starts; a store that cannot answer costs the warning, never the submission. */
async function complementWarnings(record: TrackRecord, deps: SubmitDeps): Promise<string[]> {
  try {
    return (await deps.playLog?.complement(record)) ?? [];
  } catch (error) {
    deps.logger.warn(`dbid ${record.dbid}: performance complement not checked: ${errorMessage(error)}`);
    return [];
  }
}

/** Validation only: what a GET would answer, without enrichment or storage (HEAD never creates a record). */
export function checkSubmission(
  request: RawRequest,
  deps: Pick<SubmitDeps, 'secret' | 'maxFieldLength' | 'maxFields' | 'maxListItems' | 'maxRecordBytes'>,
): void {
  const { fields: rawFields, credential } = parseSubmission(request, deps);
  authenticate(credential, deps.secret);
  requireIdentifyingField(sanitize(rawFields, deps).fields);
}

/**
 * Stores the sanitized record, with what is known of it already, and makes it current at once,
 * before any outside service is asked. The known images are linked first, so the first frame of
 * every stream carries them.
 */
async function storeAndAnnounce(
  track: NewTrack,
  knownImages: readonly KnownImage[],
  announced: Announced,
  signal: AbortSignal,
  deps: SubmitDeps,
): Promise<TrackRecord> {
  const stored = await deps.tracks.insert(track);
  deps.playLog?.started();
  if (signal.aborted) {
    // A store so slow that the 408 went out first: the record is taken back before anyone saw it.
    forget(stored.dbid, deps);
    signal.throwIfAborted();
  }
  if (knownImages.length > 0) await linkQuietly(stored, knownImages, deps);
  announced.record = stored;
  announced.previous = deps.nowPlaying.current();
  deps.nowPlaying.offer(stored);
  return stored;
}

/**
 * Enrichment, the submitted cover and the found cover fill the stored record as each arrives;
 * the other images are collected in the background (a cover found there fills it later).
 */
async function enrich(
  updates: RecordUpdates,
  input: TrackFields,
  submittedCoverUrl: string | undefined,
  warnings: string[],
  signal: AbortSignal,
  deps: SubmitDeps,
  found: { cover: () => void; artist: () => void },
): Promise<void> {
  const { images } = deps;
  const coverFound = found.cover;
  const record = updates.latest();
  // A found cover is linked at once, so an image request that waits for it finds it.
  const setCover = (cover: StoredCover) => {
    updates.fill({ coverurl: cover.url });
    void linkQuietly(record, [{ category: 'cover', key: cover.key, source: cover.source }], deps).finally(coverFound);
  };
  // The submitted cover downloads while enrichment runs, and gives up well inside the
  // processing budget: a slow cover costs the cover, never the submission (no 408 for it). It
  // replaces a cover known from the store: the submitter's file is the one to show.
  const submittedCover = fetchSubmittedCover(submittedCoverUrl, signal, deps).then((answer) => {
    if (answer.cover) {
      updates.correct({ coverurl: answer.cover.url });
      void linkQuietly(record, [{ category: 'cover', key: answer.cover.key, source: answer.cover.source }], deps).finally(coverFound);
    }
    return answer;
  });
  const enrichmentEnds = Date.now() + deps.enrichmentDeadlineSeconds * 1000;
  const fillFrom = (added: Readonly<TrackFields>, sources: Readonly<Record<string, string>>) =>
    updates.fill(added, { provider: 'enrichment', fieldSources: sources });
  const enrichment = await runEnrichers(input, deps.plan, {
    deadlineMs: deps.enrichmentDeadlineSeconds * 1000,
    signal,
    logger: deps.logger,
    onProgress: fillFrom,
  });
  fillFrom(enrichment.added, enrichment.sources);
  // The artist images start downloading now, beside the cover (docs/streams.md "The image store"):
  // a slow cover host never holds back the thumbnail a template shows.
  const artistImages = images?.collect(
    updates.latest(),
    undefined,
    enrichment.images.filter((candidate) => candidate.category !== 'cover'),
  );
  // The artist's images are looked for until their downloads end (often after the answer), never until the cover's.
  void Promise.resolve(artistImages)
    .catch(() => undefined)
    .then(() => images?.downloaded(record.dbid))
    .finally(found.artist);
  const { cover: submitted, warning } = await submittedCover;
  if (warning) warnings.push(warning);
  const cover =
    submitted ??
    coverOf(updates.latest()) ??
    (await images?.knownCover(enrichment.images)) ??
    (await enrichmentCover(images, enrichment.images, enrichmentEnds, signal));
  if (cover) setCover(cover);
  await artistImages;
  signal.throwIfAborted();
  await images?.collect(
    updates.latest(),
    cover,
    enrichment.images.filter((candidate) => candidate.category === 'cover'),
    setCover,
  );
}

/** Takes the song request the new record fulfils off the queue; its requester fills the record (`requester`, What's Now Playing's field). */
async function fulfilRequest(updates: RecordUpdates, deps: SubmitDeps): Promise<void> {
  const request = await deps.songRequests?.fulfil(updates.latest());
  if (request) updates.fill({ requester: request.requester });
}

/** The cover a record already shows (known when it was announced), as a stored cover. */
function coverOf(record: TrackRecord): StoredCover | undefined {
  const key = keyOfCoverUrl(fieldText(record.metadata, 'coverurl') ?? '');
  return key === null ? undefined : { key, url: coverUrlFor(key), source: 'image store' };
}

/**
 * Registers the record's cover search when it was announced without one and names an album (what
 * an image client asks by); answers the function that ends it.
 */
function lookingForCover(record: TrackRecord, deps: SubmitDeps): () => void {
  const artist = fieldText(record.metadata, 'artist');
  const album = fieldText(record.metadata, 'album');
  if (!deps.coversInFlight || record.metadata.coverurl !== undefined || !artist || !album) return () => undefined;
  return deps.coversInFlight.start(artist, album);
}

/** Registers the search for the record's artist images (an image client asking by artist waits for it); answers the function that ends it. */
function lookingForArtistImages(record: TrackRecord, deps: SubmitDeps): () => void {
  const artist = fieldText(record.metadata, 'artist');
  if (!deps.coversInFlight || !artist) return () => undefined;
  return deps.coversInFlight.start(artist, '');
}

/** Links images to a record; a database that fails now costs the link, never the submission. */
async function linkQuietly(record: TrackRecord, images: readonly KnownImage[], deps: SubmitDeps): Promise<void> {
  try {
    await deps.images?.link(record, images);
  } catch (error) {
    deps.logger.warn(`images of track ${record.dbid} not linked: ${errorMessage(error)}`);
  }
}

function fetchSubmittedCover(coverurl: string | undefined, signal: AbortSignal, deps: SubmitDeps): Promise<{ cover?: StoredCover; warning?: string }> {
  const { images } = deps;
  if (coverurl === undefined || !images) return Promise.resolve({});
  return withDeadline(deps.processingTimeoutSeconds * 1000 * COVER_SHARE_OF_BUDGET, [signal], (coverSignal) =>
    images.fetchSubmittedCover(coverurl, coverSignal),
  );
}

/**
 * The same play again (docs/title-first.md "The same track twice"): no new record and no history
 * row; the fields this submission sends replace the record's where they differ (a corrected
 * album), and are announced; the answer is the record as stored after that.
 */
async function samePlay(
  current: TrackRecord,
  fields: TrackFields,
  submittedCoverUrl: string | undefined,
  warnings: string[],
  signal: AbortSignal,
  deps: SubmitDeps,
): Promise<TrackRecord> {
  const running = deps.inProgress?.get(current.dbid);
  const updates = running?.updates ?? new RecordUpdates(current, deps);
  const sent = { ...fields };
  delete sent.coverurl;
  // They made it the same play: a difference of case or spaces is not a correction.
  delete sent.artist;
  delete sent.title;
  updates.correct(sent);
  if (updates.latest().metadata.coverurl === undefined) {
    const { cover, warning } = await fetchSubmittedCover(submittedCoverUrl, signal, deps);
    if (warning) warnings.push(warning);
    if (cover) updates.fill({ coverurl: cover.url });
  }
  // Its first submission's enrichment is still running: the answer waits for it, as that one's does.
  await running?.done.catch(() => undefined);
  return updates.settled();
}

/** The found front cover, downloaded in what is left of the enrichment deadline (later ones come by the stream). */
async function enrichmentCover(
  images: ImageIntake | undefined,
  candidates: readonly ImageCandidate[],
  endsAt: number,
  signal: AbortSignal,
): Promise<StoredCover | undefined> {
  const remainingMs = endsAt - Date.now();
  if (!images || remainingMs <= 0 || !candidates.some((candidate) => candidate.category === 'cover')) return undefined;
  return withDeadline(remainingMs, [signal], (coverSignal) => images.fetchEnrichmentCover(candidates, coverSignal));
}

/**
 * A 408 takes back what the submission announced (docs/title-first.md "The 408"): the track that
 * was current before it is current again at once, and the row is deleted as soon as the store
 * lets it (a stuck store is why there was a 408).
 */
function retract(announced: Announced, deps: SubmitDeps): void {
  const { record } = announced;
  if (!record) return;
  announced.updates?.stop();
  deps.nowPlaying.retract(record.dbid, announced.previous);
  forget(record.dbid, deps);
}

function forget(dbid: number, deps: SubmitDeps): void {
  deps.tracks.remove(dbid).catch((error: unknown) => deps.logger.warn(`track ${dbid} of a timed-out submission not deleted: ${errorMessage(error)}`));
}

async function withProcessingTimeout<T>(seconds: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  // The error is built when the time is up, not up front: it captures a stack, and most submissions never time out.
  const deadline = deadlineSignal(seconds * 1000, [], () => new AppError('PROCESSING_TIMEOUT', `Metadata processing exceeded ${seconds} seconds`));
  const expired = new Promise<never>((_, reject) => deadline.signal.addEventListener('abort', () => reject(deadline.signal.reason), { once: true }));
  try {
    return await Promise.race([work(deadline.signal), expired]);
  } finally {
    deadline.dispose();
  }
}
