import { createLastFmOutput } from '../../../src/outputs/lastfm';
import { createListenBrainzOutput } from '../../../src/outputs/listenbrainz';
import type { Output, TrackData } from '../../../src/outputs/output';
import type { RecordLookup } from '../../../src/outputs/scrobbler';
import type { OutputMessage } from '../../../src/store/outputs';
import { startLastFmFake, type LastFmFake } from '../../fakes/lastfm';
import { startListenBrainzFake, type ListenBrainzFake } from '../../fakes/listenbrainz';
import { eventually } from '../../helpers/eventually';
import { postJson } from '../../helpers/http';
import { waitingClock } from '../../helpers/manual-clock';
import { startTestServer } from '../../helpers/test-server';

// The scrobblers (docs/outputs.md "Scrobbling: what counts as a listen") against fakes built
// from ListenBrainz's and Last.fm's own API documents (test/fakes/listenbrainz.ts,
// test/fakes/lastfm.ts): the token and the signature checked, the limits enforced, one 429
// answered; a play is scrobbled once it has ended and counted, a jingle never, nor a play whose
// record says nobody listened.

let nextId = 1;
function change(track: Record<string, unknown> & { dbid: number }): OutputMessage {
  const id = nextId++;
  return {
    id,
    output: 'scrobbler',
    dbid: track.dbid,
    kind: 'track.changed',
    messageId: `msg_${id}`,
    payload: JSON.stringify(track),
    createdAt: Date.now(),
    attempts: 0,
  };
}

const iso = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();

/** The store as the scrobblers see it: the record before a dbid. */
function lookupOf(stored: Map<number, TrackData>): RecordLookup {
  return {
    before: (dbid) => {
      const earlier = [...stored.keys()].filter((one) => one < dbid).sort((a, b) => b - a)[0];
      const data = earlier === undefined ? undefined : stored.get(earlier);
      return Promise.resolve(data ? { data, receivedAtMs: Date.now() } : undefined);
    },
  };
}
const signal = () => AbortSignal.timeout(10_000);

/** A station's hour in four changes: a song that played through, a jingle, a song nobody heard, the next song. */
function stationChanges(stored: Map<number, TrackData>) {
  const song = {
    dbid: 1,
    artist: 'Massive Attack',
    title: 'Teardrop',
    album: 'Mezzanine',
    duration: 330,
    started_at: iso(331_000),
    musicbrainzrecordingid: 'e0a9b5b4-6a1b-4f5d-8e1d-2a6d1f0e8c11',
  };
  const jingle = { dbid: 2, artist: 'Radio Svc', title: 'Station ID', kind: 'jingle', started_at: iso(1000) };
  const unheard = { dbid: 3, artist: 'Portishead', title: 'Roads', duration: 305, started_at: iso(0) };
  const next = { dbid: 4, artist: 'Björk', title: 'Jóga', duration: 305 };
  for (const track of [song, jingle, unheard, next]) stored.set(track.dbid, track);
  return { song, jingle, unheard, next };
}

describe('listenbrainz output', () => {
  let fake: ListenBrainzFake;
  let output: Output;
  const stored = new Map<number, TrackData>();
  beforeEach(async () => {
    fake = await startListenBrainzFake();
  });
  afterEach(async () => {
    await output?.close();
    await fake.close();
  });

  it('When a song, a jingle and a song nobody heard change, then playing_now goes at once, the song that played through is one single listen, the others none; calls are a second apart', async () => {
    // The output's spacing waits on this clock: the test sees each wait it took, in order.
    const clock = waitingClock();
    output = createListenBrainzOutput({ name: 'lb', token: fake.token, url: fake.url }, lookupOf(stored), clock);
    const { song, jingle, unheard, next } = stationChanges(stored);
    expect(await output.send(change(song), signal())).toMatchObject({ outcome: 'delivered', receipt: 'now playing 1' });
    expect(await output.send(change(jingle), signal())).toMatchObject({
      outcome: 'delivered',
      receipt: '2 skipped: not music (jingle); scrobbled 1 (listen accepted)',
    });
    expect(await output.send(change(unheard), signal())).toMatchObject({ outcome: 'delivered', receipt: 'now playing 3; 2 not scrobbled: not music (jingle)' });
    // The play log wrote its listeners once it ended: nobody.
    stored.set(3, { ...unheard, listeners: { atp: 0, listener_seconds: 0, peak: 0 } });
    fake.rateLimitOnce(2);
    const message = change(next);
    const limited = await output.send(message, signal());
    expect(limited).toMatchObject({ outcome: 'retry', status: 429, retryAfterMs: 2000 });
    // Sent again as the dispatcher would: the wait X-RateLimit-Reset-In named is kept by the output itself.
    const again = await output.send({ ...message, attempts: 1 }, signal());
    expect(again).toMatchObject({ outcome: 'delivered', receipt: 'now playing 4; 3 not scrobbled: nobody listening' });
    expect(fake.answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429, 200]);
    // Before each call after the first, one second from the answer before it (ListenBrainz's one
    // call per second); before the one after the 429, the 2 s its X-RateLimit-Reset-In named.
    expect(clock.waits).toEqual([1000, 1000, 1000, 2000]);

    expect(fake.accepted.map((one) => [one.listenType, one.listen.track_metadata.track_name])).toEqual([
      ['playing_now', 'Teardrop'],
      ['single', 'Teardrop'],
      ['playing_now', 'Roads'],
      ['playing_now', 'Jóga'],
    ]);
    const single = fake.accepted[1]?.listen;
    expect(single?.listened_at).toBe(Math.floor(Date.parse(song.started_at) / 1000));
    expect(single?.track_metadata).toMatchObject({
      artist_name: 'Massive Attack',
      release_name: 'Mezzanine',
      additional_info: { duration_ms: 330_000, recording_mbid: song.musicbrainzrecordingid },
    });
  });
});

describe('scrobbling across a restart', () => {
  it('When svc restarts during a song, then the first change after it scrobbles that song from the store; a record from hours before is not a play', async () => {
    const fake = await startListenBrainzFake();
    const stored = new Map<number, TrackData>([[7, { dbid: 7, artist: 'Massive Attack', title: 'Angel', duration: 380, started_at: iso(400_000) }]]);
    // The spacing's one-second waits are only seen (the test above asserts them), not taken.
    const output = createListenBrainzOutput({ name: 'lb', token: fake.token, url: fake.url }, lookupOf(stored), waitingClock());
    const stale = createListenBrainzOutput(
      { name: 'lb2', token: fake.token, url: fake.url },
      lookupOf(new Map([[3, { dbid: 3, artist: 'A', title: 'Old', started_at: iso(5 * 3600_000) }]])),
      waitingClock(),
    );
    try {
      stored.set(8, { dbid: 8, artist: 'Air', title: 'Alone in Kyoto' });
      expect(await output.send(change({ dbid: 8, artist: 'Air', title: 'Alone in Kyoto' }), signal())).toMatchObject({
        outcome: 'delivered',
        receipt: 'now playing 8; scrobbled 7 (listen accepted)',
      });
      expect(await stale.send(change({ dbid: 4, artist: 'Air', title: 'Venus' }), signal())).toMatchObject({ outcome: 'delivered', receipt: 'now playing 4' });
      expect(fake.accepted.filter((one) => one.listenType === 'single').map((one) => one.listen.track_metadata.track_name)).toEqual(['Angel']);
    } finally {
      await output.close();
      await stale.close();
      await fake.close();
    }
  });
});

describe('listenbrainz output refused', () => {
  it('When the token is wrong, then the message fails at once with the reason and the token is nowhere in it', async () => {
    const fake = await startListenBrainzFake();
    const output = createListenBrainzOutput({ name: 'lb', token: 'not-the-token', url: fake.url });
    try {
      const delivery = await output.send(change({ dbid: 9, artist: 'A', title: 'T' }), signal());
      expect(delivery).toEqual({ outcome: 'failed', status: 401, error: 'now playing: HTTP 401: the user token was refused' });
      expect(output.target).toBe(fake.url);
    } finally {
      await output.close();
      await fake.close();
    }
  });
});

describe('lastfm output', () => {
  let fake: LastFmFake;
  let output: Output;
  const stored = new Map<number, TrackData>();
  beforeEach(async () => {
    fake = await startLastFmFake();
  });
  afterEach(async () => {
    await output?.close();
    await fake.close();
  });

  it('When the station changes tracks, then every call is signed right, error 29 is a retry after a minute, a jingle and an unheard play are never scrobbled', async () => {
    const clock = waitingClock();
    output = createLastFmOutput(
      { name: 'fm', apiKey: fake.apiKey, apiSecret: fake.apiSecret, sessionKey: fake.sessionKey, url: fake.url },
      lookupOf(stored),
      clock,
    );
    const { song, jingle, unheard, next } = stationChanges(stored);
    fake.rateLimitOnce();
    const message = change(song);
    expect(await output.send(message, signal())).toMatchObject({
      outcome: 'retry',
      status: 429,
      retryAfterMs: 60_000,
      error: expect.stringContaining('Last.fm error 29') as unknown,
    });
    expect(await output.send({ ...message, attempts: 1 }, signal())).toMatchObject({ outcome: 'delivered', receipt: 'now playing 1' });
    expect(await output.send(change(jingle), signal())).toMatchObject({
      outcome: 'delivered',
      receipt: '2 skipped: not music (jingle); scrobbled 1 (accepted 1)',
    });
    expect(await output.send(change(unheard), signal())).toMatchObject({ outcome: 'delivered' });
    stored.set(3, { ...unheard, listeners: { atp: 0, listener_seconds: 0, peak: 0 } });
    expect(await output.send(change(next), signal())).toMatchObject({ outcome: 'delivered', receipt: 'now playing 4; 3 not scrobbled: nobody listening' });

    expect(fake.errors).toEqual([29]);
    // A quarter of a second from each answer to the next call (the output's own spacing).
    expect(clock.waits).toEqual([250, 250, 250, 250]);
    expect(fake.accepted.map((call) => [call.method, call.params.track])).toEqual([
      ['track.updateNowPlaying', 'Teardrop'],
      ['track.scrobble', 'Teardrop'],
      ['track.updateNowPlaying', 'Roads'],
      ['track.updateNowPlaying', 'Jóga'],
    ]);
    expect(fake.accepted[1]?.params).toMatchObject({
      artist: 'Massive Attack',
      album: 'Mezzanine',
      duration: '330',
      chosenByUser: '0',
      timestamp: String(Math.floor(Date.parse(song.started_at) / 1000)),
    });
  });

  it("When the secret or the session key is wrong, then the message fails at once with Last.fm's reason (13, 9)", async () => {
    output = createLastFmOutput({ name: 'fm', apiKey: fake.apiKey, apiSecret: 'wrong', sessionKey: fake.sessionKey, url: fake.url });
    expect(await output.send(change({ dbid: 1, artist: 'A', title: 'T' }), signal())).toMatchObject({
      outcome: 'failed',
      error: 'now playing: Last.fm error 13: Invalid method signature supplied',
    });
    const other = createLastFmOutput({ name: 'fm2', apiKey: fake.apiKey, apiSecret: fake.apiSecret, sessionKey: 'expired', url: fake.url });
    expect(await other.send(change({ dbid: 1, artist: 'A', title: 'T' }), signal())).toMatchObject({
      outcome: 'failed',
      error: expect.stringContaining('Last.fm error 9') as unknown,
    });
    await other.close();
  });
});

describe('lastfm output through svc', () => {
  it('When two songs with a jingle between them and a next song are submitted, then the songs are scrobbled and the jingle is not', async () => {
    const fake = await startLastFmFake();
    const server = await startTestServer({
      config: {
        outputs: [{ name: 'fm', type: 'lastfm', apiKey: fake.apiKey, apiSecret: fake.apiSecret, sessionKey: fake.sessionKey, url: fake.url }],
      } as never,
      outputPollMs: 50,
    });
    try {
      // Start times a few minutes back, inside the window a submitted start is believed.
      await postJson(`${server.url}/v1/remoteinput`, { artist: 'Massive Attack', title: 'Angel', duration: 120, started_at: iso(9 * 60_000) });
      await postJson(`${server.url}/v1/remoteinput`, { artist: 'Radio Svc', title: 'Station ID', kind: 'jingle', started_at: iso(6 * 60_000) });
      await postJson(`${server.url}/v1/remoteinput`, { artist: 'Portishead', title: 'Roads', duration: 120, started_at: iso(5 * 60_000) });
      await postJson(`${server.url}/v1/remoteinput`, { artist: 'Air', title: 'Alone in Kyoto', duration: 120, started_at: iso(60_000) });
      const calls = await eventually(
        () => Promise.resolve(fake.accepted.map((call) => `${call.method} ${call.params.track}`)),
        (list) => list.includes('track.updateNowPlaying Alone in Kyoto'),
      );
      // The jingle is neither "now playing" nor scrobbled. (A play the play log counted no listeners
      // for is not scrobbled either: its count is known only once it ended: test/unit/outputs/reach-text.test.ts.)
      expect(calls).toEqual([
        'track.updateNowPlaying Angel',
        'track.scrobble Angel',
        'track.updateNowPlaying Roads',
        'track.scrobble Roads',
        'track.updateNowPlaying Alone in Kyoto',
      ]);
    } finally {
      await server.close();
      await fake.close();
    }
  });
});
