import type { NowPlaying } from '../../domain/current-track';
import type { TrackRecord } from '../../domain/track';
import type { ChangeFanOut } from './fan-out';
import { recordPayload } from './messages';

// The record events the outputs hear of (docs/outputs.md "Delivery"): a settled record, a
// deletion, a retraction; a change only starts a run, its row is written by the store with the
// record (a transactional outbox). Answers the unsubscribe.

export function feedRecordEvents(nowPlaying: NowPlaying, fanOut: ChangeFanOut): () => void {
  const onChanged = () => setImmediate(() => fanOut.expandSoon());
  // Awaited by the submission: its change is in the store before the POST is answered.
  const stopSettled = nowPlaying.onSettled((record) => fanOut.record('settled', record.dbid, recordPayload(record)));
  const onDeleted = (dbid: number) => void fanOut.record('deleted', dbid, JSON.stringify({ dbid }));
  // Keyed by the deleted dbid: the record current again was sent before, under its own dbid.
  const onRetracted = (dbid: number, current: TrackRecord | null) => void fanOut.record('restored', dbid, current ? recordPayload(current) : '{}');
  nowPlaying.on('track-changed', onChanged);
  nowPlaying.on('track-deleted', onDeleted);
  nowPlaying.on('track-retracted', onRetracted);
  return () => {
    nowPlaying.off('track-changed', onChanged);
    stopSettled();
    nowPlaying.off('track-deleted', onDeleted);
    nowPlaying.off('track-retracted', onRetracted);
  };
}
