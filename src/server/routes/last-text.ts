import Router from '@koa/router';
import { etagOf, matchesEtag } from '../../domain/etag';
import { TemplateError, compileTemplate, oneLine, requireKnownField, trackLineParts, type TrackObject } from '../../domain/template';
import { AppError } from '../../errors';
import type { NowPlaying, NowPlayingSnapshot } from '../../domain/current-track';
import type { AppState } from '../context';
import type { LastResponse } from './last';
import type { ChannelViews } from '../streams/channel-views';
import { recordJson } from '../../domain/play';

// GET /v1/last.txt and /index.txt (docs/chat-bots-and-obs.md "Plain text"): the current track
// as one line of text for chat bots (`$(urlfetch ...)`, `${customapi ...}`) and OBS text
// sources. `?format=` takes the template language of `svc last --format`. Nothing playing, or
// nothing to show: `pages.idleText` (empty unless set).

export const TEXT_PATHS = ['/v1/last.txt', '/index.txt'] as const;
/** A longer template is refused: it is a chat command's URL, not a document. */
const MAX_FORMAT_LENGTH = 1000;
const TEXT_TYPE = 'text/plain; charset=utf-8';

export interface TextAnswers {
  /** The default line (`Artist - Title`), built once per snapshot like /v1/last's body. */
  byDefault(snapshot: NowPlayingSnapshot, ifNoneMatch: string): LastResponse;
  /** A `?format=` line, rendered per request. */
  formatted(snapshot: NowPlayingSnapshot, format: string, ifNoneMatch: string): LastResponse;
}

export function createTextAnswers(idleText: string): TextAnswers {
  const cached = new WeakMap<NowPlayingSnapshot, { ok: LastResponse; notModified: LastResponse }>();
  const idle = oneLine(idleText);
  // docs/chat-bots-and-obs.md "Plain text": a chat bot prints an empty answer as an error, so a
  // line that renders empty (`?format={{title}}` for a track without one) falls back to the
  // default `Artist - Title`, then to pages.idleText.
  const lineOf = (snapshot: NowPlayingSnapshot, render: (track: TrackObject) => string) => {
    const record = snapshot.record;
    if (!record) return idle;
    const track = recordJson(record);
    return oneLine(render(track)) || trackLineParts(track).head || idle;
  };
  return {
    byDefault(snapshot, ifNoneMatch) {
      let answers = cached.get(snapshot);
      if (!answers) {
        // "Artist - Title" as `{{artist}} - {{title}}` renders it, without a dangling " - " when one is missing.
        answers = buildAnswers(lineOf(snapshot, (track) => trackLineParts(track).head));
        cached.set(snapshot, answers);
      }
      return matchesEtag(ifNoneMatch, answers.ok.headers.ETag ?? '') ? answers.notModified : answers.ok;
    },
    formatted(snapshot, format, ifNoneMatch) {
      const answers = buildAnswers(lineOf(snapshot, compileFormat(format)));
      return matchesEtag(ifNoneMatch, answers.ok.headers.ETag ?? '') ? answers.notModified : answers.ok;
    },
  };
}

function compileFormat(format: string): (track: TrackObject) => string {
  if (format.length > MAX_FORMAT_LENGTH) throw new AppError('INVALID_PARAMETERS', `Invalid 'format': longer than ${MAX_FORMAT_LENGTH} characters`);
  try {
    // The same check as `svc last --format`: a template with no field svc knows is refused, not
    // answered with an empty line a chat bot would print as an error.
    requireKnownField(format);
    return compileTemplate(format);
  } catch (error) {
    if (error instanceof TemplateError) throw new AppError('INVALID_PARAMETERS', `Invalid 'format': ${error.message}`);
    throw error;
  }
}

function buildAnswers(line: string): { ok: LastResponse; notModified: LastResponse } {
  const headers = { ETag: etagOf(line), 'Cache-Control': 'no-cache' };
  return {
    notModified: { status: 304, headers },
    ok: { status: 200, headers: { ...headers, 'Content-Type': TEXT_TYPE }, body: line, bodyBytes: Buffer.byteLength(line) },
  };
}

/** `channels`: `?channel=` (docs/channels.md "Now playing per channel"); without it every line is `nowPlaying`'s. */
export function textRoutes(nowPlaying: NowPlaying, answers: TextAnswers, channels?: ChannelViews): Router<AppState> {
  const router = new Router<AppState>();
  for (const path of TEXT_PATHS) {
    // The plain forms are answered by server/fast-paths/last-fast-path.ts before Koa; this serves `?format=`.
    router.get(path, (ctx) => {
      const format = ctx.query.format;
      if (Array.isArray(format)) throw new AppError('INVALID_PARAMETERS', "Repeated query parameter 'format'");
      const snapshot = (channels ? channels.choose(ctx.query.channel) : nowPlaying).snapshot();
      const ifNoneMatch = ctx.get('If-None-Match');
      const answer = format ? answers.formatted(snapshot, format, ifNoneMatch) : answers.byDefault(snapshot, ifNoneMatch);
      ctx.set(answer.headers);
      ctx.status = answer.status;
      if (answer.body !== undefined) ctx.body = answer.body;
    });
  }
  return router;
}
