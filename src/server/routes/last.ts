import type { NowPlayingSnapshot } from '../../domain/current-track';
import { matchesEtag } from '../../domain/etag';

// GET /v1/last (docs/http-api.md; docs/decisions.md): the current track from a copy serialized once per
// change, with an ETag, and 304 for a matching If-None-Match (overlays poll every second).

export interface LastResponse {
  status: 200 | 304;
  /** Shared by every request for the same snapshot: read, never modified. */
  headers: Record<string, string>;
  /** Absent for a 304. */
  body?: string;
  /** `Buffer.byteLength(body)`, for the fast path's Content-Length. */
  bodyBytes?: number;
}

interface Answers {
  ok: LastResponse;
  notModified: LastResponse;
}

// Both answers are built once per snapshot (once per change of the current track), not once per
// poll: the fast path asks for one on every request. Keyed weakly, so each NowPlaying's old
// snapshots go with it.
const answersOf = new WeakMap<NowPlayingSnapshot, Answers>();

export function lastResponse(snapshot: NowPlayingSnapshot, ifNoneMatch: string): LastResponse {
  let answers = answersOf.get(snapshot);
  if (!answers) {
    answers = buildAnswers(snapshot);
    answersOf.set(snapshot, answers);
  }
  return matchesEtag(ifNoneMatch, snapshot.etag) ? answers.notModified : answers.ok;
}

function buildAnswers(snapshot: NowPlayingSnapshot): Answers {
  const headers = { ETag: snapshot.etag, 'Cache-Control': 'no-cache' };
  return {
    // A 304 has no body, so no Content-Type (Koa drops it on its route too; the fast path must match).
    notModified: { status: 304, headers },
    ok: {
      status: 200,
      headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' },
      body: snapshot.body,
      bodyBytes: Buffer.byteLength(snapshot.body),
    },
  };
}
