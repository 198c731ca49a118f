import { FUZZY_SLICE, MAX_REQUEST_FIELD, canReachThreshold, normaliseName, type SongRequest } from '../../../src/domain/song-request';
import { SongRequests } from '../../../src/requests/song-requests';
import type { SongRequestStore } from '../../../src/store/song-requests';
import type { TrackRecord } from '../../../src/domain/track';
import { silentLogger } from '../../helpers/silent-logger';

// Issue 54 M5, the attack: 1,000 long requests made every track change block 1.5 s, as the played
// track was scored against the whole queue in one go. Now the match runs in slices: other work
// (counted here as turns of the event loop's check phase) runs while a long queue is searched.

function queued(id: number, artist: string, title: string): SongRequest {
  return {
    id,
    requester: `viewer${id}`,
    artist,
    title,
    normalizedArtist: normaliseName(artist),
    normalizedTitle: normaliseName(title),
    origin: 'lumia',
    userPlatform: null,
    externalId: null,
    userInput: null,
    requestedFor: null,
    createdAt: id,
  };
}

/** A queue in memory: only what fulfil uses. */
function storeOf(queue: SongRequest[]): SongRequestStore {
  const unused = () => Promise.reject(new Error('not used by fulfil'));
  return {
    add: unused,
    list: () => Promise.resolve([...queue]),
    remove: (id) => {
      const index = queue.findIndex((request) => request.id === id);
      return Promise.resolve(index < 0 ? null : (queue.splice(index, 1)[0] ?? null));
    },
    removeByIdentity: unused,
    clear: unused,
  };
}

const record = (artist: string, title: string): TrackRecord => ({ dbid: 7, metadata: { artist, title } }) as unknown as TrackRecord;

/** Counts the event loop's turns until `work` settles: 0 when it ran in one piece. */
async function turnsWhile<T>(work: Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let settled = false;
  const tick = () => {
    if (settled) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const value = await work;
  settled = true;
  return { value, turns };
}

describe('song requests: matching a play against a long queue', () => {
  /** Names as long as the played ones, scored in full, matching none of them. */
  const alike = (index: number) => `Zq${String(index).padStart(6, '0')} Vw`;
  const long = (index: number) => `${'x'.repeat(MAX_REQUEST_FIELD - 10)}${String(index).padStart(10, '0')}`;

  it('When 1,000 requests like the played names wait and a track plays that matches none, then other work runs while it is matched, and nothing is taken', async () => {
    const queue = Array.from({ length: 1000 }, (_, index) => queued(index + 1, alike(index), alike(index)));
    const requests = new SongRequests(storeOf(queue), silentLogger);
    const { value, turns } = await turnsWhile(requests.fulfil(record('Nobody Here', 'Nothing Like It')));
    expect(value).toBeUndefined();
    // Three attempts (both names, artist, title) of 1,000 / FUZZY_SLICE slices each.
    expect(turns).toBeGreaterThanOrEqual(3 * (1000 / FUZZY_SLICE - 1));
    expect(queue).toHaveLength(1000);
  });

  it('When the request a track fulfils is the last of a long queue, then the sliced search still finds it', async () => {
    const queue = Array.from({ length: 999 }, (_, index) => queued(index + 1, alike(index), alike(index)));
    queue.push(queued(1000, 'Massive Attack', 'Teardropp'));
    const requests = new SongRequests(storeOf(queue), silentLogger);
    const { value, turns } = await turnsWhile(requests.fulfil(record('Massive Attack', 'Teardrop')));
    expect(value?.request_id).toBe(1000);
    expect(turns).toBeGreaterThan(0);
    expect(queue).toHaveLength(999);
  });

  it('When 1,000 requests of the longest names wait (the attack), then none can reach the threshold, none is scored, and a real match among them is still found', async () => {
    const queue = Array.from({ length: 1000 }, (_, index) => queued(index + 1, long(index), long(index)));
    expect(queue.every((request) => !canReachThreshold({ artist: 'Massive Attack', title: 'Teardrop' }, request))).toBe(true);
    queue.splice(500, 0, queued(5000, 'Massive Attack', 'Teardropp'));
    const requests = new SongRequests(storeOf(queue), silentLogger);
    expect((await requests.fulfil(record('Massive Attack', 'Teardrop')))?.request_id).toBe(5000);
    expect(queue).toHaveLength(1000);
  });
});
