import http from 'node:http';
import https from 'node:https';
import type { Logger } from '../log';
import type { Recognition } from './recognition';

// Pulled streams (docs/recognition.md "Pulled streams"): svc connects to each configured stream
// URL as a listener and hands its bytes to the recognition, as the Icecast listener does for a
// source. A stream that ends, fails, answers other than 2xx or goes silent is connected to
// again after a backoff that doubles up to its cap; the waits come from whoever builds this.

export interface PulledStream {
  url: string;
  channel: string;
  vinyl: boolean;
}

export interface PulledStreamsOptions {
  streams: readonly PulledStream[];
  recognition: Pick<Recognition, 'listen' | 'markProblem'>;
  logger: Logger;
  /** The wait before the attempt-th reconnection (1, 2, ...), in ms. */
  backoffMs: (attempt: number) => number;
  /** Silence after which a connected stream counts as hung, in ms. */
  idleMs: number;
  /** Schedules a reconnection (tests and svc serve pass setTimeout; answers a cancel). */
  schedule?: (run: () => void, ms: number) => () => void;
}

export interface RunningPulledStreams {
  close(): void;
}

/** A doubling backoff from 1 s, capped. */
export function doublingBackoff(maxMs: number): (attempt: number) => number {
  return (attempt) => Math.min(maxMs, 1000 * 2 ** Math.min(Math.max(attempt - 1, 0), 20));
}

/** The URL as status and logs show it: without user and password. */
export function streamName(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url;
  }
}

export function startPulledStreams(options: PulledStreamsOptions): RunningPulledStreams {
  const schedule =
    options.schedule ??
    ((run: () => void, ms: number) => {
      const timer = setTimeout(run, ms);
      return () => clearTimeout(timer);
    });
  const stops = options.streams.map((stream) => pull(stream, options, schedule));
  return {
    close: () => {
      for (const stop of stops) stop();
    },
  };
}

function pull(stream: PulledStream, options: PulledStreamsOptions, schedule: (run: () => void, ms: number) => () => void): () => void {
  const name = streamName(stream.url);
  let closed = false;
  let attempt = 0;
  let cancel: (() => void) | null = null;
  let request: http.ClientRequest | null = null;
  const retry = (problem: string) => {
    request = null;
    if (closed) return;
    attempt += 1;
    const wait = options.backoffMs(attempt);
    options.recognition.markProblem(name, stream.channel, stream.vinyl, `${problem}; connecting again in ${Math.round(wait / 1000)} s`);
    if (attempt === 1 || attempt % 10 === 0) options.logger.warn(`recognition: stream ${name}: ${problem} (attempt ${attempt}; again in ${wait} ms)`);
    cancel = schedule(connect, wait);
  };
  const connect = () => {
    if (closed) return;
    let settled = false;
    const once = (problem: string) => {
      if (settled) return;
      settled = true;
      retry(problem);
    };
    const get = stream.url.startsWith('https:') ? https.get : http.get;
    request = get(stream.url, { headers: { 'User-Agent': 'svc recognition', 'Icy-MetaData': '0' } }, (response) => {
      const status = response.statusCode ?? 0;
      if (status < 200 || status > 299) {
        response.resume();
        once(`HTTP ${status}`);
        return;
      }
      // A web page (an error page, a player page at the stream's old address) is no audio stream: not decoded.
      const type = String(response.headers['content-type'] ?? '').toLowerCase();
      if (/^(text\/|application\/(json|xhtml))/.test(type)) {
        response.resume();
        once(`not an audio stream (Content-Type ${type.split(';')[0] ?? type})`);
        return;
      }
      const sink = options.recognition.listen(name, stream.channel, stream.vinyl);
      response.on('data', (bytes: Buffer) => {
        attempt = 0;
        sink.write(bytes);
      });
      // What arrived is listened to the end before the stream is connected to again.
      const after = (problem: string) => {
        sink.end();
        // A stream that simply ended says what the decoder made of it (no audio in it, a decoding error).
        void sink.done.then((reason) => once(problem === 'the stream ended' ? reason : problem));
      };
      response.once('end', () => after('the stream ended'));
      response.once('error', (error) => after(error.message));
    });
    request.setTimeout(options.idleMs, () => request?.destroy(new Error(`no data for ${Math.round(options.idleMs / 1000)} s`)));
    request.once('error', (error) => once(error.message));
  };
  connect();
  return () => {
    closed = true;
    cancel?.();
    request?.destroy();
  };
}
