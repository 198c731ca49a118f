import net from 'node:net';
import { createTestDatabase, postgresForPart, type TestDatabase } from '../../helpers/postgres';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { storedCount } from '../../helpers/stored-count';
import { until } from '../../helpers/eventually';

// Clients that drop mid-POST (docs/several-instances.md "Clients that drop mid-body"): a
// 400-class event with nothing stored and no 500, logged at most once a minute, on both backends.
// On PostgreSQL the arrival number is a round trip before the body is read, so a client can be
// gone before reading begins.

const CLIENTS = 20;

/** Sends the headers and part of the body, then drops the connection. */
function dropMidBody(url: string): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(
        'POST /v1/remoteinput HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{"artist": "Dropped", "title": "Mid',
        () => {
          socket.destroy();
          resolve();
        },
      );
    });
    socket.on('error', reject);
  });
}

const backends: [string, () => Promise<{ database?: TestDatabase; server: TestServer }>][] = [['SQLite', async () => ({ server: await startTestServer() })]];
if (postgresForPart('aborted POSTs on PostgreSQL')) {
  backends.push([
    'PostgreSQL',
    async () => {
      const database = await createTestDatabase();
      return { database, server: await startTestServer({ config: { database: { location: database.url } } }) };
    },
  ]);
}

describe.each(backends)('clients that drop mid-POST on %s', (_name, start) => {
  let started: { database?: TestDatabase; server: TestServer };
  beforeAll(async () => {
    started = await start();
  });
  afterAll(async () => {
    await started.server.close();
    await started.database?.drop();
  });

  it(`When ${CLIENTS} clients drop mid-body, then nothing is stored, nothing is a 500, at most two lines are logged, and the next submission works`, async () => {
    const { server } = started;
    await Promise.all(Array.from({ length: CLIENTS }, () => dropMidBody(server.url)));
    // Each dropped request ends as the server notices the close; wait for the first report of it.
    const deadline = Date.now() + 10_000;
    while (!server.logs.some((line) => line.includes('closed the connection')) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The marker: a complete submission on a new connection, sent after every dropped socket was
    // closed; by its answer the server has seen those closes. It is also the one stored track.
    const after = await fetch(`${server.url}/v1/remoteinput`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ artist: 'Complete', title: 'Body' }),
    });
    expect(after.status).toBe(200);
    await until(() => server.logs.some((line) => / 200 /.test(line) && line.includes('/v1/remoteinput')), 'the marker is logged');

    expect(await storedCount(server.server.tracks)).toBe(1);
    const lines = server.logs.filter((line) => /remoteinput|readable|abort|closed the connection| 500 /i.test(line) && !/ 200 /.test(line));
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(server.logs.filter((line) => / error | 500 /.test(line))).toEqual([]);
  });
});
