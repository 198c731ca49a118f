import { spawn } from 'node:child_process';
import { withoutPlayFields } from '../helpers/play-fields';
import fs from 'node:fs';
import path from 'node:path';
import { postJson } from '../helpers/http';
import { withinHangGuard } from '../helpers/real-time';
import { SVC_BIN, cleanEnv, runCli } from '../helpers/run-cli';
import { makeTempDir } from '../helpers/temp-dir';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { serverPerTest, startCli, unusedPort } from './cli-process';

// `svc last --follow`: the real binary on the real /v1/images/ws stream.

describe('svc last --follow', () => {
  let server: TestServer;
  serverPerTest((started) => (server = started));

  const submit = async (artist: string, title: string) => {
    const answer = await postJson(`${server.url}/v1/remoteinput`, { artist, title, album: 'Live', date: '1999' });
    expect(answer.status).toBe(200);
  };
  // No wait for the connection: a track submitted before the client subscribed is pushed to it
  // as the current one when it does (docs/http-api.md), so nothing is missed either way.

  test('When the track changes twice and the server restarts, then each track is printed once and it keeps following', async () => {
    await submit('Artist A', 'First');
    const follow = startCli(['last', '--follow', '--url', server.url]);
    expect(await follow.waitForLines(1)).toEqual(['Artist A - First (Live, 1999)']);

    await submit('Artist B', 'Second');
    await follow.waitForLines(2);
    await submit('Artist C', 'Third');
    await follow.waitForLines(3);

    await server.restart();
    await follow.waitForStderr(/lost the connection to ws:\/\/127\.0\.0\.1:\d+\/v1\/images\/ws/);
    await follow.waitForStderr(/reconnected/);
    // The server pushes the current track again on reconnect; it must not be printed twice.
    await submit('Artist D', 'Fourth');
    await follow.waitForLines(4);

    const exit = await follow.stop('SIGINT');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(follow.lines()).toEqual([
      'Artist A - First (Live, 1999)',
      'Artist B - Second (Live, 1999)',
      'Artist C - Third (Live, 1999)',
      'Artist D - Fourth (Live, 1999)',
    ]);
    expect(follow.stderr()).not.toMatch(/\n\s+at /);
  });

  test('When tracks are stored while it reconnects, then each is printed once, in order, from the last dbid printed', async () => {
    // docs/cli.md "`svc last`": behind a load balancer the tracks stored while it was away come
    // from another instance; here another server on the same database file stores them.
    const temp = makeTempDir();
    const dbFile = path.join(temp.dir, 'svc.db');
    let own = await startTestServer({ dbFile });
    const post = async (url: string, title: string) => expect((await postJson(`${url}/v1/remoteinput`, { artist: 'Gapless', title })).status).toBe(200);
    try {
      await post(own.url, 'Before');
      const follow = startCli(['last', '--follow', '--format', '{title}', '--url', own.url]);
      await follow.waitForLines(1);
      const port = own.server.port;
      await own.close();
      await follow.waitForStderr(/lost the connection/);
      const other = await startTestServer({ dbFile });
      for (const title of ['Missed 1', 'Missed 2', 'Missed 3']) await post(other.url, title);
      await other.close();
      own = await startTestServer({ dbFile, config: { port } });
      await follow.waitForStderr(/reconnected/);
      await post(own.url, 'After');
      expect(await follow.waitForLines(5)).toEqual(['Before', 'Missed 1', 'Missed 2', 'Missed 3', 'After']);
      await follow.stop();
    } finally {
      await own.close();
      temp.cleanup();
    }
  });

  test('When the server comes back with a fresh database that reuses the dbid, then the new track is still printed', async () => {
    await submit('Old', 'Database');
    const follow = startCli(['last', '--follow', '--json', '--url', server.url]);
    await follow.waitForLines(1);
    const port = server.server.port;
    await server.close();
    await follow.waitForStderr(/lost the connection/);
    server = await startTestServer({ config: { port } });
    await follow.waitForStderr(/reconnected/);
    await submit('New', 'Database');
    const tracks = (await follow.waitForLines(2)).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(tracks.map((track) => track.artist)).toEqual(['Old', 'New']);
    expect(tracks[1]?.dbid).toBe(tracks[0]?.dbid);
    await follow.stop();
  });

  test('When nothing plays yet, then it prints nothing until the first track arrives', async () => {
    const follow = startCli(['last', '--follow', '--url', server.url]);
    await submit('Late', 'Starter');
    expect(await follow.waitForLines(1)).toEqual(['Late - Starter (Live, 1999)']);
    expect(await follow.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  test('When --json is given, then every line is the /v1/last object of a track (NDJSON)', async () => {
    const follow = startCli(['last', '--follow', '--json', '--url', server.url]);
    await submit('One', 'Uno');
    await follow.waitForLines(1);
    await submit('Two', 'Dos');
    const lines = await follow.waitForLines(2);
    await follow.stop();
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    // The play fields come too (the /v1/last object), checked on their own.
    expect(parsed.map((track) => track.kind)).toEqual(['music', 'music']);
    expect(parsed.map(withoutPlayFields)).toEqual([
      { dbid: expect.any(Number), artist: 'One', title: 'Uno', album: 'Live', date: '1999' },
      { dbid: expect.any(Number), artist: 'Two', title: 'Dos', album: 'Live', date: '1999' },
    ]);
    expect(parsed[1]?.dbid).toBeGreaterThan(parsed[0]?.dbid as number);
  });

  test('When --format is given, then every change is printed with the template', async () => {
    const follow = startCli(['last', '--follow', '--format', '{title} by {artist} [{genre}]', '--url', server.url]);
    await submit('Moderat', 'Bad Kingdom');
    expect(await follow.waitForLines(1)).toEqual(['Bad Kingdom by Moderat']);
    await follow.stop();
  });

  test("When run as `sh -c 'svc last --follow | head -n 1'` and no track changes, then the pipeline ends after the first line, svc exiting 0", async () => {
    await submit('Head', 'One');
    // svc's exit code goes to a file: in a POSIX sh pipeline only the last command's status is kept.
    const { dir, cleanup } = makeTempDir();
    const codeFile = `${dir}/code.txt`;
    const errFile = `${dir}/stderr.txt`;
    const script = `{ "${process.execPath}" "${SVC_BIN}" last --follow --url ${server.url} 2>"$ERR_FILE"; echo $? >"$CODE_FILE"; } | head -n 1`;
    // Its own process group, so that a failing test can end the whole pipeline.
    const shell = spawn('sh', ['-c', script], { env: { ...cleanEnv(), ERR_FILE: errFile, CODE_FILE: codeFile }, detached: true });
    try {
      let out = '';
      shell.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      // No track changes: without noticing that head has gone, svc would follow for ever (the guard says so).
      const code = await withinHangGuard(new Promise<number | null>((resolve) => shell.on('close', resolve)), 'the pipeline ending once head has its line');
      expect(code).toBe(0);
      expect(out).toBe('Head - One (Live, 1999)\n');
      expect(fs.readFileSync(codeFile, 'utf8')).toBe('0\n');
      expect(fs.readFileSync(errFile, 'utf8')).toBe('');
    } finally {
      if (shell.exitCode === null && shell.pid) process.kill(-shell.pid, 'SIGKILL');
      cleanup();
    }
  });

  test('When the reader of stdout goes away and nothing new arrives, then it exits 0 without a stack trace', async () => {
    await submit('Pipe', 'One');
    const follow = startCli(['last', '--follow', '--url', server.url]);
    await follow.waitForLines(1);
    follow.child.stdout.destroy();
    expect(await follow.exited).toEqual({ code: 0, signal: null });
    expect(follow.stderr()).toBe('');
  });

  test('When the server cannot be reached at start, then it exits 4 instead of waiting', async () => {
    const port = await unusedPort();
    const result = await runCli(['last', '--follow', '--url', `http://127.0.0.1:${port}`]);
    expect(result).toMatchObject({ code: 4, stdout: '' });
    expect(result.stderr).toMatch(/cannot reach ws:\/\/127\.0\.0\.1:\d+\/v1\/images\/ws: connection refused/);
  });
});
