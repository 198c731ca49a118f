import { openSse, type SseClient } from './sse-client';

// An /v1/events reader that behaves as EventSource does across reconnects (docs/several-instances.md
// "Resuming streams"): when the stream ends or cannot be opened it comes back with the
// Last-Event-ID of the last event it got; a 503 is retried after its Retry-After, a busy
// server's short stream after its `retry:`. It keeps every
// track id in the order received, to count gaps and duplicates.

export interface ResumingReader {
  /** Every `track` event id received, in order, across connections. */
  ids(): number[];
  /** Answers 503 and busy streams received (told to retry). */
  refusals(): number;
  /** Streams opened. */
  connections(): number;
  /** The process serving the open stream: the random prefix of its X-Request-Id (middleware/request-log.ts). */
  servedBy(): string | undefined;
  stop(): void;
}

export function startResumingReader(url: string, since: number, headers: Record<string, string> = {}, reconnectMs = 100): ResumingReader {
  const done: number[] = [];
  let current: SseClient | undefined;
  let refusals = 0;
  let connections = 0;
  let stopped = false;
  const received = () => [...done, ...trackIds(current)];

  void (async () => {
    while (!stopped) {
      const last = received().at(-1) ?? since;
      let client: SseClient;
      try {
        client = await openSse(url, { ...headers, 'Last-Event-ID': String(last) });
      } catch {
        await pause(reconnectMs);
        continue;
      }
      if (client.status !== 200) {
        if (client.status === 503) refusals += 1;
        const retryAfter = Number(client.headers['retry-after'] ?? 0);
        client.close();
        await pause(client.status === 503 ? Math.max(reconnectMs, retryAfter * 1000) : reconnectMs);
        continue;
      }
      connections += 1;
      current = client;
      if (stopped) client.close();
      await client.ended;
      done.push(...trackIds(client));
      current = undefined;
      // A busy server's short stream (src/server/sse/frames.ts busyAnswer): back after its `retry:`.
      const busy = client.events.some((event) => event.event === 'busy');
      if (busy) refusals += 1;
      if (!stopped) await pause(busy ? Math.max(reconnectMs, client.retries.at(-1) ?? 0) : reconnectMs);
    }
  })();

  return {
    ids: received,
    refusals: () => refusals,
    connections: () => connections,
    servedBy: () => String(current?.headers['x-request-id'] ?? '').split('-')[0] || undefined,
    stop() {
      stopped = true;
      current?.close();
    },
  };
}

function trackIds(client: SseClient | undefined): number[] {
  return (client?.events ?? []).filter((event) => event.event === 'track').map((event) => Number(event.id));
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** What went wrong in one reader's ids, given every dbid stored after it started: gaps, duplicates, steps back. */
export function streamFaults(ids: readonly number[], expected: readonly number[]): { gaps: number; duplicates: number; backwards: number } {
  const seen = new Set(ids);
  let backwards = 0;
  for (let index = 1; index < ids.length; index += 1) if (ids[index] < ids[index - 1]) backwards += 1;
  return { gaps: expected.filter((dbid) => !seen.has(dbid)).length, duplicates: ids.length - seen.size, backwards };
}
