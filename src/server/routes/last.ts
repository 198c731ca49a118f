import type { NowPlayingSnapshot } from '../../store/now-playing';
import { matchesEtag } from '../etag';

// GET /v1/last (api-spec 4.1; decisions.md): the current track from a copy serialized once per
// change, with an ETag, and 304 for a matching If-None-Match (overlays poll every second).

export interface LastResponse {
  status: 200 | 304;
  headers: Record<string, string>;
  /** Absent for a 304. */
  body?: string;
}

export function lastResponse(snapshot: NowPlayingSnapshot, ifNoneMatch: string): LastResponse {
  const headers = { ETag: snapshot.etag, 'Cache-Control': 'no-cache' };
  // A 304 has no body, so no Content-Type (Koa drops it on its route too; the fast path must match).
  if (matchesEtag(ifNoneMatch, snapshot.etag)) return { status: 304, headers };
  return { status: 200, headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' }, body: snapshot.body };
}
