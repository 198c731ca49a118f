import fs from 'node:fs';
import path from 'node:path';
import { RateLimiter } from '../../../src/enrich/rate-limit';
import type { Logger } from '../../../src/log';
import { compressedFingerprint, decodeFile, DEFAULT_TOOLS, SAMPLE_RATE } from '../../../src/recognition/audio-tools';
import { OnlineTurns, wavFile, type OnlineIdentifier } from '../../../src/recognition/online';
import { decodeAcrCloud } from '../../../src/recognition/online-acrcloud';
import { decodeAudD } from '../../../src/recognition/online-audd';
import { createOnlineIdentifier, OnlineLookups, type OnlineSettings } from '../../../src/recognition/online-lookups';
import { ITEMS_PER_SECOND } from '../../../src/recognition/recognition';
import { startRecognitionFake, type RecognitionFake } from '../../fakes/recognition-services';
import { gateOnPeers } from '../../helpers/peers';
import { makeSong } from '../../helpers/recognition-audio';
import { makeTempDir } from '../../helpers/temp-dir';

// The online lookups (docs/recognition.md "Online lookups"): when a stream is looked up (once per
// play, the library first), the answers of ACRCloud and AudD read, and each service's client
// against the fakes built from its documentation (test/fakes/recognition-services.ts).

const HANG_GUARD_MS = 60_000;
const TURNS = { sampleItems: 80, retryItems: 400, holdItems: 300 };

describe('OnlineTurns: once per play, the library first', () => {
  it('looks a stretch up once its first sample has played untitled, and not again in that play', () => {
    const turns = new OnlineTurns(TURNS);
    expect(turns.window(16, false)).toBeNull();
    expect(turns.window(80, false)).toBeNull();
    expect(turns.window(96, false)).toBe('lookup');
    expect(turns.window(112, false)).toBeNull();
    turns.answered(96, { remainingItems: 100 });
    expect(turns.holding()).toBe(true);
    for (let now = 128; now < 196; now += 16) expect(turns.window(now, false)).toBeNull();
    // The track's time is up: its play ends, and the next one is looked up after its own sample.
    expect(turns.window(200, false)).toBe('ended');
    expect(turns.window(264, false)).toBeNull();
    expect(turns.window(280, false)).toBe('lookup');
  });

  it('after nothing found waits retryItems; a match without a length holds holdItems', () => {
    const turns = new OnlineTurns(TURNS);
    turns.window(0, false);
    expect(turns.window(80, false)).toBe('lookup');
    turns.answered(80, null);
    expect(turns.window(470, false)).toBeNull();
    expect(turns.window(480, false)).toBeNull();
    expect(turns.window(560, false)).toBe('lookup');
    turns.answered(560, {});
    expect(turns.window(850, false)).toBeNull();
    expect(turns.window(860, false)).toBe('ended');
  });

  it('a library title ends the online one, and an answer arriving after it counts for nothing', () => {
    const turns = new OnlineTurns(TURNS);
    turns.window(0, false);
    expect(turns.window(80, false)).toBe('lookup');
    expect(turns.window(96, true)).toBeNull();
    turns.answered(80, { remainingItems: 1000 });
    expect(turns.holding()).toBe(false);
    turns.window(112, false);
    expect(turns.window(192, false)).toBe('lookup');
    turns.answered(192, { remainingItems: 1000 });
    expect(turns.window(208, true)).toBe('ended');
  });
});

describe('the answers', () => {
  it('wavFile writes a RIFF header for 16-bit mono PCM', () => {
    const wav = wavFile({ pcm: new Int16Array([1, -1, 3]), sampleRate: SAMPLE_RATE });
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.readUInt32LE(24)).toBe(SAMPLE_RATE);
    expect(wav.readUInt16LE(22)).toBe(1);
    expect(wav.readUInt32LE(40)).toBe(6);
    expect(wav.readInt16LE(46)).toBe(-1);
  });

  it('ACRCloud: 0 is a match (score 0-100, what remains of the track), 1001 none, any other code an error', () => {
    const music = {
      title: 'T',
      artists: [{ name: 'A' }, { name: 'B' }],
      album: { name: 'L' },
      external_ids: { isrc: 'XX' },
      score: 87,
      duration_ms: 200_000,
      play_offset_ms: 50_000,
    };
    expect(decodeAcrCloud({ status: { code: 0, msg: 'Success' }, metadata: { music: [music] } })).toEqual({
      tags: { title: 'T', artist: 'A, B', album: 'L', isrc: 'XX' },
      score: 0.87,
      remainingSeconds: 150,
    });
    expect(decodeAcrCloud({ status: { code: 1001, msg: 'No result' } })).toBeNull();
    expect(() => decodeAcrCloud({ status: { code: 3014, msg: 'Invalid Signature' } })).toThrow('error answer 3014: Invalid Signature');
    expect(() => decodeAcrCloud('<html>')).toThrow('error answer (no code)');
  });

  it('AudD: success with a result is a match without a score; result null none; an error answer throws', () => {
    expect(decodeAudD({ status: 'success', result: { artist: 'A', title: 'T', album: 'L', label: 'R', timecode: '00:10' } })).toEqual({
      tags: { title: 'T', artist: 'A', album: 'L', label: 'R' },
    });
    expect(decodeAudD({ status: 'success', result: null })).toBeNull();
    expect(() => decodeAudD({ status: 'error', error: { error_code: 900, error_message: 'Wrong API token' } })).toThrow('error answer 900: Wrong API token');
  });
});

describe('OnlineLookups: the sample', () => {
  it('ends where the window that asked ends, not at the newest decoded audio (which runs ahead)', async () => {
    const perItem = SAMPLE_RATE / ITEMS_PER_SECOND;
    const sent: Int16Array[] = [];
    let asked: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (asked = resolve));
    const identifier: OnlineIdentifier = { service: 'acoustid', identify: async ({ pcm }) => (sent.push(pcm), asked(), null) };
    const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
    const lookups = new OnlineLookups(
      { identifier, logger: quiet, submit: async () => undefined, end: () => undefined, titled: () => false },
      { sampleItems: 80, retryItems: 1000, holdItems: 1000, itemsPerSecond: ITEMS_PER_SECOND },
    );
    // Held: 200 items of PCM from stream position 40, each sample its own item number.
    const held = Int16Array.from({ length: Math.round(200 * perItem) }, (_, i) => 40 + Math.floor(i / perItem));
    const stream = { name: 's', channel: 'c' };
    lookups.window(stream, 50, false, () => ({ pcm: held, position: 40 }));
    lookups.window(stream, 130, false, () => ({ pcm: held, position: 40 }));
    await done;
    const sample = sent[0] ?? new Int16Array(0);
    expect(sample.length).toBe(Math.round((80 / ITEMS_PER_SECOND) * SAMPLE_RATE));
    expect(sample[sample.length - 1]).toBe(129);
    // Its start, 80 items earlier: within a sample of item 50 (the sample count is rounded).
    expect(Math.abs((sample[0] ?? 0) - 50)).toBeLessThanOrEqual(1);
    lookups.close();
  });
});

const SETTINGS: OnlineSettings = {
  service: 'acrcloud',
  apiKey: 'acr-key',
  apiSecret: 'acr-secret',
  baseUrl: '',
  sampleSeconds: 0,
  retryAfterSeconds: 300,
  holdSeconds: 240,
  minIntervalSeconds: 0,
  timeoutSeconds: 20,
};

describe('createOnlineIdentifier: no key, no lookup', () => {
  it('is off without a service or without the key (ACRCloud: key and secret)', () => {
    expect(createOnlineIdentifier({ ...SETTINGS, service: '' }, DEFAULT_TOOLS, 'svc/test')).toEqual({ off: 'no service configured' });
    expect(createOnlineIdentifier({ ...SETTINGS, apiKey: '' }, DEFAULT_TOOLS, 'svc/test')).toEqual({ off: "acrcloud needs the user's own key" });
    expect(createOnlineIdentifier({ ...SETTINGS, apiSecret: '' }, DEFAULT_TOOLS, 'svc/test')).toEqual({ off: "acrcloud needs the user's own key" });
    expect(createOnlineIdentifier({ ...SETTINGS, service: 'audd', apiSecret: '' }, DEFAULT_TOOLS, 'svc/test')).toMatchObject({ sampleSeconds: 12 });
    expect(createOnlineIdentifier({ ...SETTINGS, service: 'acoustid', apiSecret: '' }, DEFAULT_TOOLS, 'svc/test')).toMatchObject({ sampleSeconds: 30 });
  });
});

const real = gateOnPeers(['sox', 'oggenc', 'vorbiscomment', 'ffmpeg', 'fpcalc'], 'online lookups against the fakes');
const KEYS = {
  acrcloud: { accessKey: 'acr-key', accessSecret: 'acr-secret', qps: 50 },
  audd: { apiToken: 'audd-token' },
  acoustid: { client: 'acoustid-key' },
};
const temp = makeTempDir('svc-online-unit-');
const RECORDING_ID = '5b11f4ce-a62d-471e-81fc-a69a8278c7da';
let fake: RecognitionFake;
let known: Int16Array;
let other: Int16Array;
let knownWhole: Int16Array;
let otherWhole: Int16Array;
/** The AcoustID fake's rate counter's clock (ms): moved by the tests, never read from the machine. */
let acoustIdClock = 0;

real.beforeAll(async () => {
  const dir = path.join(temp.dir, 'songs');
  fs.mkdirSync(dir);
  const song = makeSong(dir, 'catalogued', 41, 24, { artist: 'Far', title: 'Catalogued' });
  const unknown = makeSong(dir, 'uncatalogued', 42, 24);
  fake = await startRecognitionFake(
    [{ file: song, artist: 'Far', title: 'Catalogued', durationSeconds: 24, musicbrainzRecordingId: RECORDING_ID }],
    KEYS,
    (file) => decodeFile(DEFAULT_TOOLS, file),
    { now: () => acoustIdClock },
  );
  const excerpt = async (file: string, from: number, to: number) => {
    const pcm = await decodeFile(DEFAULT_TOOLS, file);
    const all = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2);
    return all.slice(from * SAMPLE_RATE, to * SAMPLE_RATE);
  };
  known = await excerpt(song, 6, 18);
  other = await excerpt(unknown, 6, 18);
  knownWhole = await excerpt(song, 2, 22);
  otherWhole = await excerpt(unknown, 2, 22);
}, HANG_GUARD_MS);

real.afterAll(async () => {
  await fake?.close();
  temp.cleanup();
});

function identifier(settings: Partial<OnlineSettings>): OnlineIdentifier {
  const made = createOnlineIdentifier({ ...SETTINGS, baseUrl: fake.url, ...settings }, DEFAULT_TOOLS, 'svc/test', new RateLimiter(0));
  if ('off' in made) throw new Error(made.off);
  return made.identifier;
}

const signal = new AbortController().signal;
const sample = (pcm: Int16Array) => ({ pcm, sampleRate: SAMPLE_RATE });

real.describe('each service against its fake', () => {
  it(
    'ACRCloud: a signed sample of a catalogued track is titled with its score; another is not; a wrong secret or key is refused',
    async () => {
      const acr = identifier({});
      const match = await acr.identify(sample(known), signal);
      expect(match?.tags).toMatchObject({ artist: 'Far', title: 'Catalogued' });
      expect(match?.score).toBeGreaterThan(0.7);
      expect(match?.remainingSeconds).toBeGreaterThan(3);
      expect(await acr.identify(sample(other), signal)).toBeNull();
      await expect(identifier({ apiSecret: 'wrong' }).identify(sample(known), signal)).rejects.toThrow('error answer 3014: Invalid Signature');
      await expect(identifier({ apiKey: 'wrong' }).identify(sample(known), signal)).rejects.toThrow('error answer 3001');
    },
    HANG_GUARD_MS,
  );

  it(
    'AudD: the token and the file titled; a wrong token is refused',
    async () => {
      const audd = identifier({ service: 'audd', apiKey: KEYS.audd.apiToken, baseUrl: `${fake.url}/audd/` });
      expect((await audd.identify(sample(known), signal))?.tags).toMatchObject({ artist: 'Far', title: 'Catalogued', label: 'Fake Records' });
      expect(await audd.identify(sample(other), signal)).toBeNull();
      await expect(identifier({ service: 'audd', apiKey: 'wrong', baseUrl: `${fake.url}/audd/` }).identify(sample(known), signal)).rejects.toThrow(
        'error answer 900',
      );
    },
    HANG_GUARD_MS,
  );

  it(
    "AcoustID: fpcalc's compressed fingerprint of most of a registered track is titled with its recording and score; a short sample or another track is not",
    async () => {
      const acoustid = identifier({ service: 'acoustid', apiKey: KEYS.acoustid.client, baseUrl: `${fake.url}/v2` });
      const match = await acoustid.identify(sample(knownWhole), signal);
      expect(match?.tags).toEqual({ artist: 'Far', title: 'Catalogued', musicbrainzrecordingid: RECORDING_ID });
      expect(match?.score).toBeGreaterThan(0.8);
      // AcoustID matches whole tracks: a 12 s sample of the 24 s track is outside its length window.
      expect(await acoustid.identify(sample(known), signal)).toBeNull();
      expect(await acoustid.identify(sample(otherWhole), signal)).toBeNull();
      await expect(identifier({ service: 'acoustid', apiKey: 'wrong', baseUrl: `${fake.url}/v2` }).identify(sample(known), signal)).rejects.toThrow('HTTP 400');
      expect(fake.answers.filter((answer) => answer.service === 'acoustid')).toEqual([
        { service: 'acoustid', code: 0, title: 'Catalogued' },
        { service: 'acoustid', code: 0 },
        { service: 'acoustid', code: 0 },
        { service: 'acoustid', code: 4 },
      ]);
    },
    HANG_GUARD_MS,
  );

  it(
    "AcoustID's fake refuses as the server does: no key, no fingerprint or duration, an undecodable fingerprint, more than 3 requests a second",
    async () => {
      const { fingerprint, duration } = await compressedFingerprint(
        DEFAULT_TOOLS,
        Buffer.from(knownWhole.buffer, knownWhole.byteOffset, knownWhole.byteLength),
      );
      const lookup = async (fields: Record<string, string>) => {
        const response = await fetch(`${fake.url}/v2/lookup`, { method: 'POST', body: new URLSearchParams(fields) });
        return { status: response.status, body: (await response.json()) as { status: string; error?: { code: number; message: string }; results?: unknown[] } };
      };
      const good = { client: KEYS.acoustid.client, duration: String(duration), fingerprint, meta: 'recordings' };
      const refusal = (status: number, code: number, message: string) => ({ status, body: { status: 'error', error: { code, message } } });
      expect(await lookup({ ...good, client: '' })).toEqual(refusal(400, 2, 'missing required parameter "client"'));
      expect(await lookup({ ...good, client: 'nope' })).toEqual(refusal(400, 4, 'invalid API key'));
      expect(await lookup({ client: good.client, duration: good.duration })).toEqual(refusal(400, 2, 'missing required parameter "fingerprint"'));
      expect(await lookup({ ...good, duration: 'soon' })).toEqual(refusal(400, 2, 'missing required parameter "duration"'));
      expect(await lookup({ ...good, fingerprint: 'AQAAB' })).toEqual(refusal(400, 3, 'invalid fingerprint'));
      expect(await lookup({ ...good, fingerprint: fingerprint.slice(0, 40) })).toEqual(refusal(400, 3, 'invalid fingerprint'));
      // The recordings' ids only, with meta=recordingids.
      const ids = await lookup({ ...good, meta: 'recordingids' });
      expect(ids.body.results).toEqual([{ id: expect.any(String), score: expect.any(Number), recordings: [{ id: RECORDING_ID }] }]);
      // 3 a second, counted over 20 s: the 61st lookup within one 5 s step is refused, the refusals are not counted.
      acoustIdClock = 1_000_000;
      const answers = [];
      for (let n = 0; n < 62; n += 1) answers.push((await lookup(good)).status);
      expect(answers).toEqual([...Array<number>(60).fill(200), 429, 429]);
      expect(await lookup(good)).toEqual(refusal(429, 14, 'rate limit (3.000000 requests per second) exceeded, try again later'));
      // 20 s later the window has moved on.
      acoustIdClock += 20_000;
      expect((await lookup(good)).status).toBe(200);
    },
    HANG_GUARD_MS,
  );

  it(
    'an error answer gives no title and a log line, and the play is not looked up again',
    async () => {
      const lines: string[] = [];
      const logger: Logger = { info: (line) => lines.push(line), warn: (line) => lines.push(line), error: (line) => lines.push(line) };
      const submitted: Record<string, string>[] = [];
      let answered: () => void = () => undefined;
      const acr = identifier({});
      let asked = 0;
      const counted: OnlineIdentifier = { service: acr.service, identify: (...args) => ((asked += 1), acr.identify(...args)) };
      const lookups = new OnlineLookups(
        {
          identifier: counted,
          logger: { ...logger, info: (line) => (lines.push(line), answered()), warn: (line) => (lines.push(line), answered()) },
          submit: async (_stream, fields) => void submitted.push(fields),
          end: () => undefined,
          titled: () => false,
        },
        { sampleItems: Math.round(10 * ITEMS_PER_SECOND), retryItems: 10_000, holdItems: 1000, itemsPerSecond: ITEMS_PER_SECOND },
      );
      fake.failWith('limit');
      const stream = { name: 'test-stream', channel: 'test' };
      const done = new Promise<void>((resolve) => (answered = resolve));
      for (let now = 0; now <= 200; now += 16) lookups.window(stream, now, false, () => ({ pcm: known }));
      await done;
      fake.failWith(null);
      for (let now = 216; now <= 400; now += 16) lookups.window(stream, now, false, () => ({ pcm: known }));
      expect(submitted).toEqual([]);
      expect(lines).toEqual([expect.stringContaining('the acrcloud lookup failed, no title (error answer 3015: QpS limit exceeded)')]);
      expect(asked).toBe(1);
      expect(fake.answers.filter((answer) => answer.code === 3015)).toHaveLength(1);
      lookups.close();
    },
    HANG_GUARD_MS,
  );
});
