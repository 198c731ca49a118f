import http from 'node:http';

// A Server-Sent Events reader over a plain HTTP request, parsing the stream the way the HTML
// standard's EventSource does (fields per line, an empty line dispatches, ":" lines are comments).

export interface SseEvent {
  event: string;
  id: string;
  data: string;
}

export interface SseClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  events: SseEvent[];
  /** Every `retry:` value and comment seen, in order. */
  retries: number[];
  comments: string[];
  /** The next event not yet taken by next() (waits for it). */
  next(): Promise<SseEvent>;
  /** Resolves when the server ends or drops the stream. */
  ended: Promise<void>;
  close(): void;
}

export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.get({ host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, headers, agent: false }, (response) => {
      const events: SseEvent[] = [];
      const retries: number[] = [];
      const comments: string[] = [];
      const waiting: ((event: SseEvent) => void)[] = [];
      let taken = 0;
      let buffer = '';
      let current: SseEvent = { event: 'message', id: '', data: '' };
      let dataLines: string[] = [];
      const onLine = (line: string) => {
        if (line === '') {
          if (dataLines.length > 0) {
            current.data = dataLines.join('\n');
            events.push(current);
            waiting.shift()?.(current);
          }
          current = { event: 'message', id: current.id, data: '' };
          dataLines = [];
          return;
        }
        if (line.startsWith(':')) {
          comments.push(line.slice(1).trim());
          return;
        }
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') current.event = value;
        else if (field === 'id') current.id = value;
        else if (field === 'data') dataLines.push(value);
        else if (field === 'retry') retries.push(Number(value));
      };
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let end = buffer.indexOf('\n');
        while (end !== -1) {
          onLine(buffer.slice(0, end).replace(/\r$/, ''));
          buffer = buffer.slice(end + 1);
          end = buffer.indexOf('\n');
        }
      });
      const ended = new Promise<void>((done) => {
        response.once('end', done);
        response.once('close', done);
        response.once('error', () => done());
      });
      resolve({
        status: response.statusCode ?? 0,
        headers: response.headers,
        events,
        retries,
        comments,
        next() {
          const ready = events[taken];
          taken += 1;
          if (ready) return Promise.resolve(ready);
          return new Promise((resolveEvent) => waiting.push(resolveEvent));
        },
        ended,
        close: () => request.destroy(),
      });
    });
    request.on('error', reject);
  });
}
