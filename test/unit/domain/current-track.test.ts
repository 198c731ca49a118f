import type { TrackRecord } from '../../../src/domain/track';
import { NowPlaying } from '../../../src/domain/current-track';

// NowPlaying.retract: a deleted current track hands over to the previous record (docs/http-api.md).

const record = (dbid: number, title: string): TrackRecord => ({
  dbid,
  receivedSeq: dbid,
  receivedAt: new Date(dbid * 1000).toISOString(),
  metadata: { title },
});

describe('NowPlaying.retract', () => {
  it('When the current track is retracted, then the previous record is current and a track-changed is emitted', () => {
    const nowPlaying = new NowPlaying(record(2, 'Current'));
    const changes: TrackRecord[] = [];
    nowPlaying.on('track-changed', (changed) => changes.push(changed));
    expect(nowPlaying.retract(2, record(1, 'Previous'))).toBe(true);
    expect(nowPlaying.current()?.dbid).toBe(1);
    expect(JSON.parse(nowPlaying.snapshot().body)).toEqual({ dbid: 1, title: 'Previous' });
    expect(changes.map((changed) => changed.dbid)).toEqual([1]);
  });

  it('When another record is retracted, then nothing changes and nothing is emitted', () => {
    const nowPlaying = new NowPlaying(record(2, 'Current'));
    const etag = nowPlaying.snapshot().etag;
    let emitted = 0;
    nowPlaying.on('track-changed', () => emitted++);
    expect(nowPlaying.retract(1, record(2, 'Current'))).toBe(false);
    expect(nowPlaying.snapshot().etag).toBe(etag);
    expect(emitted).toBe(0);
  });

  it('When the last record is retracted, then /v1/last is {} and no frame is emitted', () => {
    const nowPlaying = new NowPlaying(record(1, 'Only'));
    let emitted = 0;
    nowPlaying.on('track-changed', () => emitted++);
    expect(nowPlaying.retract(1, null)).toBe(true);
    expect(nowPlaying.snapshot().body).toBe('{}');
    expect(emitted).toBe(0);
  });

  it('When a newer submission arrives after a retraction, then it becomes current as usual', () => {
    const nowPlaying = new NowPlaying(record(2, 'Current'));
    nowPlaying.retract(2, record(1, 'Previous'));
    expect(nowPlaying.offer(record(3, 'Next'))).toBe(true);
    expect(nowPlaying.current()?.dbid).toBe(3);
  });

  it('When a record with a lower dbid is offered after a higher one (a slow body, another instance), then the highest dbid stays current', () => {
    const nowPlaying = new NowPlaying(null);
    const changed: number[] = [];
    nowPlaying.on('track-changed', (record) => changed.push(record.dbid));
    // The slow body arrived first (a lower arrival number) and was stored last (the higher dbid).
    expect(nowPlaying.offer({ ...record(2, 'slow body'), receivedSeq: 1 })).toBe(true);
    expect(nowPlaying.offer({ ...record(1, 'fast body'), receivedSeq: 2 })).toBe(false);
    expect(nowPlaying.current()?.dbid).toBe(2);
    expect(changed).toEqual([2]);
  });
});
