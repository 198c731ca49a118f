import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_TOOLS, fingerprintPcm, SAMPLE_RATE } from '../../src/recognition/audio-tools';
import { DEFAULT_SEARCH, FingerprintIndex } from '../../src/recognition/fingerprint-index';
import { ITEMS_PER_SECOND } from '../../src/recognition/recognition';
import { ACOUSTID_DOCUMENTED_RATE, acoustIdLookup, AcoustIdRateLimiter } from './acoustid-catalogue';

// Fakes of the three online recognition services svc may ask (docs/recognition.md "Online
// lookups"), each on 127.0.0.1, refusing what the real one refuses. They recognise for real:
// the catalogue's tracks are fingerprinted (fpcalc) and a sample is matched against them with
// svc's own index, so a sample of another track gets no title.
//
// - ACRCloud: the identification API, https://docs.acrcloud.com/reference/identification-api/identification-api
//   (multipart/form-data POST to /v1/identify: access_key, sample_bytes (under 5 MB), sample,
//   timestamp, signature = base64 HMAC-SHA1 of "POST\n/v1/identify\n" + access_key + "\n" +
//   data_type + "\n" + signature_version + "\n" + timestamp, data_type audio|fingerprint,
//   signature_version 1), and its status codes, always HTTP 200 {"status": {"code", "msg"}}:
//   0 success, 1001 no result, 2004 can't generate fingerprint, 3001 missing/invalid access key,
//   3002 a body not multipart/form-data (from the scan tool below), 3006 invalid arguments, 3014 invalid signature, 3015 QpS limit exceeded. Where that list comes
//   from: it was written from https://docs.acrcloud.com/sdk-reference/error-codes, a page the
//   search tool used to check it does not hold (it holds the identification API page above). What
//   could be checked against ACRCloud's own code: its scan tool acrcloud/acrcloud_scan_files_for_windows
//   (ACRCloud_Desktop/MainForm.cs @ 324153da) reads 1001 "NoResult", 3001 "Missing/Invalid Access
//   Key", 3002 "Invalid ContentType. valid Content-Type is multipart/form-data", 3003 "Limit
//   exceeded", 3006 "Invalid parameters", 3014 "InvalidSignature" and 3015 "Could not generate
//   fingerprint" -- so 3015 is unsettled (third-party clients read it as the QpS limit). svc
//   reads every code but 0 and 1001 as a failed lookup (src/recognition/online-acrcloud.ts), so
//   the choice changes no svc behaviour.
// - AudD: https://docs.audd.io/ (POST to https://api.audd.io/ with api_token and a file sent as
//   multipart/form-data; {"status":"success","result":{artist,title,album,release_date,label,
//   timecode,song_link}} or result null; {"status":"error","error":{error_code,error_message}}:
//   900 wrong API token, 901 no api_token, 700 no file received, 300 fingerprinting error).
// - AcoustID: https://acoustid.org/webservice (/v2/lookup, GET or form POST: client, duration,
//   fingerprint, meta; 3 requests a second), with the checks, error codes, answer shape, length
//   window, score threshold and rate counting of acoustid-server's own source, as
//   test/fakes/acoustid-catalogue.ts lists them (acoustid/api/errors.py: 2 missing required
//   parameter, 3 invalid fingerprint, 4 invalid API key, 14 too many requests with HTTP 429).
//   The catalogue's tracks are registered with their raw fingerprints; the compressed one a
//   lookup sends is decoded as chromaprint does (test/fakes/chromaprint.ts) and scored as
//   AcoustID's matcher does, so a lookup matches only a registered track of about its length.

export interface CatalogueTrack {
  file: string;
  artist: string;
  title: string;
  album?: string;
  isrc?: string;
  durationSeconds: number;
  /** The MusicBrainz recording id AcoustID answers with (a UUID; one is made up when absent). */
  musicbrainzRecordingId?: string;
}

export interface FakeOptions {
  /** AcoustID's allowed requests per second (counted over 20 s, as its server does); 3 unless set. */
  acoustidRate?: number;
  /** The AcoustID rate counter's clock (ms); Date.now unless set. */
  now?: () => number;
}

/** A made-up UUID, the same for the same kind and number. */
const fakeUuid = (kind: number, n: number) => `${kind.toString(16).padStart(8, '0')}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

export interface RecognitionFake {
  url: string;
  /** Each request's service and the code it was answered with (0/"success": a match, or none found). */
  answers: { service: 'acrcloud' | 'audd' | 'acoustid'; code: number | string; title?: string }[];
  /** Answer every request with this error from now on (AcoustID: once its checks pass; null: back to normal). */
  failWith(error: 'limit' | null): void;
  close(): Promise<void>;
}

export interface FakeKeys {
  acrcloud: { accessKey: string; accessSecret: string; qps: number };
  audd: { apiToken: string };
  acoustid: { client: string };
}

interface Parsed {
  form: FormData | null;
  contentType: string;
  text: string;
}

export async function startRecognitionFake(
  catalogue: readonly CatalogueTrack[],
  keys: FakeKeys,
  decode: (file: string) => Promise<Buffer>,
  options: FakeOptions = {},
): Promise<RecognitionFake> {
  const fingerprints = await Promise.all(
    catalogue.map(async (track, id) => {
      const pcm = await decode(track.file);
      return { id, fingerprint: await fingerprintPcm(DEFAULT_TOOLS, pcm), seconds: Math.round(pcm.length / 2 / SAMPLE_RATE) };
    }),
  );
  const index = new FingerprintIndex(fingerprints.map(({ id, fingerprint }) => ({ id, fingerprint })));
  const answers: RecognitionFake['answers'] = [];
  let failing: 'limit' | null = null;
  const acrTimes: number[] = [];

  const identifyWav = async (wav: Buffer) => {
    if (wav.length < 44 || wav.toString('ascii', 0, 4) !== 'RIFF' || wav.toString('ascii', 8, 12) !== 'WAVE') return 'not audio';
    const items = await fingerprintPcm(DEFAULT_TOOLS, wav.subarray(44)).catch(() => null);
    if (!items) return 'not audio';
    const match = index.search(items, DEFAULT_SEARCH);
    return match ? { track: catalogue[match.trackId], match, end: match.offset + items.length } : null;
  };

  const acrcloud = async (request: Parsed): Promise<unknown> => {
    const status = (code: number, msg: string) => ({ status: { code, msg, version: '1.0' } });
    const field = (name: string) => request.form?.get(name);
    const text = (name: string) => {
      const value = field(name);
      return typeof value === 'string' ? value : '';
    };
    if (!request.form) return status(3002, 'Invalid ContentType. valid Content-Type is multipart/form-data');
    if (field('access_key') !== keys.acrcloud.accessKey) return status(3001, 'Missing/Invalid Access Key');
    const timestamp = text('timestamp');
    const dataType = text('data_type');
    const version = text('signature_version');
    const expected = createHmac('sha1', keys.acrcloud.accessSecret)
      .update(['POST', '/v1/identify', keys.acrcloud.accessKey, dataType, version, timestamp].join('\n'))
      .digest('base64');
    if (field('signature') !== expected) return status(3014, 'Invalid Signature');
    const now = Date.now();
    while (acrTimes.length > 0 && (acrTimes[0] ?? 0) < now - 1000) acrTimes.shift();
    acrTimes.push(now);
    if (failing === 'limit' || acrTimes.length > keys.acrcloud.qps) return status(3015, 'QpS limit exceeded');
    const sample = field('sample');
    if (!(sample instanceof Blob) || dataType !== 'audio' || version !== '1') return status(3006, 'Invalid arguments');
    const bytes = Buffer.from(await sample.arrayBuffer());
    if (Number(field('sample_bytes')) !== bytes.length || bytes.length >= 5 * 1024 * 1024) return status(3006, 'Invalid arguments: sample_bytes');
    const found = await identifyWav(bytes);
    if (found === 'not audio') return status(2004, "Can't generate fingerprint");
    if (!found) return status(1001, 'No result');
    const { track, match, end } = found;
    return {
      ...status(0, 'Success'),
      result_type: 0,
      metadata: {
        timestamp_utc: new Date().toISOString().slice(0, 19).replace('T', ' '),
        music: [
          {
            title: track.title,
            artists: [{ name: track.artist }],
            album: { name: track.album ?? '' },
            ...(track.isrc ? { external_ids: { isrc: track.isrc } } : {}),
            acrid: `fake${match.trackId}`,
            score: Math.round(match.score * 100),
            duration_ms: track.durationSeconds * 1000,
            play_offset_ms: Math.round((end / ITEMS_PER_SECOND) * 1000),
            result_from: 3,
          },
        ],
      },
    };
  };

  const audd = async (request: Parsed): Promise<unknown> => {
    const error = (code: number, message: string) => ({ status: 'error', error: { error_code: code, error_message: message } });
    const token = request.form?.get('api_token') ?? new URLSearchParams(request.text).get('api_token');
    if (token === null || token === undefined || token === '') return error(901, 'No api_token passed, and the limit was reached');
    if (token !== keys.audd.apiToken) return error(900, 'Wrong API token');
    if (failing === 'limit') return error(902, 'The limit was reached');
    const file = request.form?.get('file');
    if (!(file instanceof Blob)) return error(700, "You haven't sent a file for recognition (or we didn't receive it)");
    const found = await identifyWav(Buffer.from(await file.arrayBuffer()));
    if (found === 'not audio') return error(300, 'Fingerprinting error: there was a problem with audio decoding');
    if (!found) return { status: 'success', result: null };
    const seconds = Math.round(found.end / ITEMS_PER_SECOND);
    return {
      status: 'success',
      result: {
        artist: found.track.artist,
        title: found.track.title,
        album: found.track.album ?? '',
        release_date: '2026-01-01',
        label: 'Fake Records',
        timecode: `${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}`,
        song_link: 'https://lis.tn/fake',
      },
    };
  };

  const acoustid = acoustIdLookup(
    catalogue.map((track, id) => ({
      id: fakeUuid(1, id),
      fingerprint: fingerprints[id]?.fingerprint ?? new Uint32Array(0),
      seconds: fingerprints[id]?.seconds ?? 0,
      recording: { id: track.musicbrainzRecordingId ?? fakeUuid(2, id), title: track.title, artists: [{ id: fakeUuid(3, id), name: track.artist }] },
    })),
    keys.acoustid.client,
    new AcoustIdRateLimiter(options.acoustidRate ?? ACOUSTID_DOCUMENTED_RATE, options.now ?? Date.now),
    () => failing,
  );

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const url = new URL(req.url ?? '/', 'http://fake.invalid');
        const contentType = String(req.headers['content-type'] ?? '');
        const form = contentType.startsWith('multipart/form-data')
          ? await new Request('http://fake.invalid/', { method: 'POST', headers: { 'content-type': contentType }, body }).formData().catch(() => null)
          : null;
        const parsed: Parsed = { form, contentType, text: body.toString('utf8') };
        let status = 200;
        let answer: unknown;
        if (url.pathname === '/v1/identify' && req.method === 'POST') {
          answer = await acrcloud(parsed);
          const code = (answer as { status: { code: number } }).status.code;
          const title = (answer as { metadata?: { music: { title: string }[] } }).metadata?.music[0]?.title;
          answers.push({ service: 'acrcloud', code, ...(title ? { title } : {}) });
        } else if (url.pathname === '/audd/') {
          answer = await audd(parsed);
          const result = answer as { status: string; error?: { error_code: number }; result?: { title: string } | null };
          answers.push({ service: 'audd', code: result.error?.error_code ?? result.status, ...(result.result ? { title: result.result.title } : {}) });
        } else if (url.pathname === '/v2/lookup') {
          const form = contentType.startsWith('application/x-www-form-urlencoded') ? parsed.text : '';
          const reply = acoustid(url.searchParams, new URLSearchParams(form));
          status = reply.status;
          answer = reply.body;
          const code = reply.body.status === 'error' ? reply.body.error.code : 0;
          answers.push({ service: 'acoustid', code, ...(reply.title !== undefined ? { title: reply.title } : {}) });
        } else {
          status = 404;
          answer = { error: 'not found' };
        }
        res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answers,
    failWith: (error) => {
      failing = error;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
