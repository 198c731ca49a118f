import { AppError } from '../errors';
import type { TrackStore } from '../store/tracks';
import { authenticate } from './authenticate';
import type { NowPlaying } from '../domain/current-track';
import { requestCredential, type RawRequest } from './parse';

// DELETE /v1/history/<dbid> (docs/decisions.md "History"): authenticate with the same carriers and
// 403s as /v1/remoteinput -> delete -> if it was current, publish the previous record.

export interface DeleteDeps {
  secret: string;
  tracks: TrackStore;
  nowPlaying: NowPlaying;
}

export async function deleteTrack(request: RawRequest, dbid: number, deps: DeleteDeps): Promise<void> {
  // The secret is checked before the dbid, so a caller without it learns nothing about what exists.
  authenticate(requestCredential(request), deps.secret);
  if (!(await deps.tracks.remove(dbid))) throw new AppError('NOT_FOUND', `No record with dbid ${dbid}`);
  deps.nowPlaying.deleted(dbid);
  // Only the current track's deletion changes what is current: then (and only then) the newest record left is read.
  if (deps.nowPlaying.current()?.dbid === dbid) deps.nowPlaying.retract(dbid, await deps.tracks.current());
}
