import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Enricher } from '../../src/enrich/enricher';
import { request } from '../helpers/http';
import { cleanEnv, runCli, SVC_BIN } from '../helpers/run-cli';
import { makeTempDir } from '../helpers/temp-dir';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { unusedPort } from './cli-process';
import { peersPresent } from '../helpers/peers';
import { withoutPlayFields } from '../helpers/play-fields';

// `svc submit`, spawned as the real binary against a real server with a secret.

const SECRET = 's3cret';

async function lastTrack(server: TestServer): Promise<unknown> {
  return (await request(`${server.url}/v1/last`)).json;
}

function parseLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('svc submit', () => {
  let server: TestServer;
  const env = (extra: NodeJS.ProcessEnv = {}) => ({ SVC_URL: server.url, SVC_SECRET: SECRET, ...extra });

  beforeAll(async () => {
    server = await startTestServer({ config: { secret: SECRET, maxFieldLength: 40 } });
  });
  afterAll(async () => {
    await server.close();
  });

  describe('From options', () => {
    test('When artist, title and album are given, then it prints the processed track on one line and stores it', async () => {
      const result = await runCli(['submit', '--artist', 'Daft Punk', '--title', 'One More Time', '--album', 'Discovery', '--field', 'date=2001'], {
        env: env(),
      });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^#\d+ Daft Punk - One More Time \(Discovery, 2001\)\n$/);
      expect(await lastTrack(server)).toMatchObject({ artist: 'Daft Punk', title: 'One More Time', album: 'Discovery' });
    });

    test('When --json is given, then it prints the server response as it is', async () => {
      const result = await runCli(['submit', '--json', '--artist', 'Moderat', '--title', 'A New Error', '--field', 'bpm=122', '--field', 'key=Am'], {
        env: env(),
      });
      expect(result.code).toBe(0);
      const response = JSON.parse(result.stdout) as Record<string, unknown>;
      expect(response).toEqual({
        dbid: expect.any(Number),
        processed_metadata: { artist: 'Moderat', title: 'A New Error', bpm: 122, key: 'Am' },
      });
      expect(withoutPlayFields(await lastTrack(server))).toEqual({ dbid: response.dbid, artist: 'Moderat', title: 'A New Error', bpm: 122, key: 'Am' });
    });

    test('When a field is too long, then the warning goes to stderr and the result to stdout', async () => {
      const title = 'x'.repeat(50);
      const result = await runCli(['submit', '--json', '--artist', 'Long', '--title', title], { env: env() });
      expect(result.code).toBe(0);
      expect(result.stderr).toBe("svc: warning: Field 'title' truncated from 50 to 40 characters\n");
      expect(JSON.parse(result.stdout)).toMatchObject({ warnings: ["Field 'title' truncated from 50 to 40 characters"] });
    });

    test('When the secret comes from --secret, then it is sent in the header and never in a URL', async () => {
      const before = server.logs.length;
      const result = await runCli(['submit', '--secret', SECRET, '--artist', 'Header', '--title', 'Only'], { env: { SVC_URL: server.url } });
      expect(result.code).toBe(0);
      const requestLines = server.logs.slice(before).filter((line) => line.includes('/v1/remoteinput'));
      expect(requestLines).toHaveLength(1);
      expect(requestLines[0]).toMatch(/ info POST \/v1\/remoteinput 200 /);
      expect(server.logs.join('\n')).not.toContain(SECRET);
    });

    test('When the secret comes from the config file, then it is used', async () => {
      const temp = makeTempDir();
      try {
        fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ client: { url: server.url, secret: SECRET } }));
        const result = await runCli(['submit', '--artist', 'From', '--title', 'Config'], { cwd: temp.dir });
        expect(result).toMatchObject({ code: 0, stderr: '' });
      } finally {
        temp.cleanup();
      }
    });

    test('When the secret is wrong, then it exits 3, says so, and nothing is stored', async () => {
      const before = await lastTrack(server);
      const result = await runCli(['submit', '--secret', 'wrong', '--artist', 'Nope', '--title', 'Nope'], { env: { SVC_URL: server.url } });
      expect(result).toMatchObject({ code: 3, stdout: '' });
      expect(result.stderr).toBe('svc: authentication refused (403): Invalid secret (check --secret, SVC_SECRET or client.secret)\n');
      expect(await lastTrack(server)).toEqual(before);
    });

    test('When the secret is missing, then it exits 3', async () => {
      const result = await runCli(['submit', '--json', '--artist', 'Nope', '--title', 'Nope'], { env: { SVC_URL: server.url } });
      expect(result).toMatchObject({ code: 3, stdout: '' });
      expect(result.stderr).toContain('Missing secret in request');
    });

    test('When no identifying field is sent, then the server rejects it and it exits 5', async () => {
      const result = await runCli(['submit', '--field', 'genre=House'], { env: env() });
      expect(result).toMatchObject({ code: 5, stdout: '' });
      expect(result.stderr).toMatch(/^svc: input rejected \(400\): A submission needs at least one of artist/);
    });

    test('When the body is larger than the server allows, then it exits 5 (413)', async () => {
      const small = await startTestServer({ config: { maxBodyBytes: 200 } });
      try {
        const result = await runCli(['submit', '--artist', 'Big', '--field', `comments=${'y'.repeat(500)}`], { env: { SVC_URL: small.url } });
        expect(result).toMatchObject({ code: 5, stdout: '' });
        expect(result.stderr).toContain('input rejected (413)');
      } finally {
        await small.close();
      }
    });

    test('When processing takes longer than the server allows, then it exits 1 (408)', async () => {
      const stuck: Enricher = {
        name: 'stuck',
        enrich: (_track, { signal }) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
      };
      const slow = await startTestServer({ config: { processingTimeoutSeconds: 0.3, enrichment: { deadlineSeconds: 10 } }, plan: [[stuck]] });
      try {
        const result = await runCli(['submit', '--artist', 'Slow', '--title', 'Track'], { env: { SVC_URL: slow.url } });
        expect(result).toMatchObject({ code: 1, stdout: '' });
        expect(result.stderr).toMatch(/^svc: server error \(408\): Metadata processing /);
      } finally {
        await slow.close();
      }
    });

    test('When the server cannot be reached, then it retries until --timeout and exits 4, saying nothing more on a pipe', async () => {
      const port = await unusedPort();
      const result = await runCli(['submit', '--artist', 'A', '--title', 'B', '--timeout', '1'], { env: { SVC_URL: `http://127.0.0.1:${port}` } });
      expect(result).toMatchObject({ code: 4, stdout: '' });
      expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^svc: cannot reach .*connection refused/)]);
    });

    const testWithScript = peersPresent(['script'], 'svc submit on a terminal') ? test : test.skip;
    testWithScript('When the server cannot be reached from a terminal, then it says once that it is trying again', async () => {
      const port = await unusedPort();
      // script(1) gives the command a pseudo-terminal, as a person's shell does.
      const command = [process.execPath, SVC_BIN, 'submit', '--artist', 'A', '--title', 'B', '--timeout', '2'].map((word) => `'${word}'`).join(' ');
      const output = await new Promise<string>((resolve) =>
        execFile(
          'script',
          ['-qec', command, '/dev/null'],
          { env: { ...cleanEnv(), SVC_URL: `http://127.0.0.1:${port}`, NO_COLOR: '1' }, timeout: 20_000 },
          (_error, stdout) => resolve(stdout),
        ),
      );
      const lines = output.split(/\r?\n/).filter((line) => line !== '');
      expect(lines.filter((line) => line.includes('trying again'))).toEqual([
        expect.stringMatching(/^svc: trying again for up to [12] s \(--timeout\): cannot reach .*connection refused/),
      ]);
      expect(lines.at(-1)).toMatch(/^svc: cannot reach .*connection refused/);
    });
  });

  describe('Usage errors (2)', () => {
    test.each([
      ['nothing to submit', ['submit']],
      ['a --field without "="', ['submit', '--field', 'bpm']],
      ['an argument other than -', ['submit', 'tracks.json']],
      ['an unknown option', ['submit', '--artsit', 'typo']],
    ])('When given %s, then it exits 2 without contacting the server', async (_name, args) => {
      const before = server.logs.length;
      const result = await runCli(args, { env: env() });
      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr).not.toBe('');
      expect(server.logs.slice(before)).toEqual([]);
    });
  });

  describe('From stdin (-)', () => {
    const ndjson = [
      '{"artist":"Burial","title":"Archangel"}',
      '',
      '{"artist": "Broken", ',
      '["not", "an", "object"]',
      '{"artist":"Four Tet","title":"Baby"}',
      '{"genre":"no identifying field"}',
      '{"artist":"Floating Points","title":"Silhouettes"}',
      '',
    ].join('\n');

    test('When a malformed line sits in the middle, then the others go in, the bad ones are reported by line number, and it exits 5', async () => {
      const result = await runCli(['submit', '-'], { env: env(), input: ndjson });
      expect(
        result.stdout
          .split('\n')
          .filter(Boolean)
          .map((line) => line.replace(/^#\d+ /, '')),
      ).toEqual(['Burial - Archangel', 'Four Tet - Baby', 'Floating Points - Silhouettes']);
      const errors = result.stderr.split('\n').filter(Boolean);
      expect(errors).toHaveLength(3);
      expect(errors[0]).toMatch(/^svc: line 3: invalid JSON: /);
      expect(errors[1]).toBe('svc: line 4: expected a JSON object, got an array');
      expect(errors[2]).toMatch(/^svc: line 6: input rejected \(400\): A submission needs/);
      expect(result.code).toBe(5);
      expect(await lastTrack(server)).toMatchObject({ artist: 'Floating Points', title: 'Silhouettes' });
    });

    test('When --json is given, then each submitted line gives one JSON response line, in order', async () => {
      const result = await runCli(['submit', '-', '--json'], { env: env(), input: ndjson });
      const responses = parseLines(result.stdout);
      expect(responses.map((response) => (response.processed_metadata as Record<string, unknown>).artist)).toEqual(['Burial', 'Four Tet', 'Floating Points']);
      const dbids = responses.map((response) => response.dbid as number);
      expect([...dbids].sort((a, b) => a - b)).toEqual(dbids);
      expect(result.code).toBe(5);
    });

    test('When every line is fine, then it exits 0', async () => {
      const input = '{"artist":"A1","title":"T1"}\r\n{"artist":"A2","title":"T2"}\r\n';
      const result = await runCli(['submit', '-', '--json'], { env: env(), input });
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(parseLines(result.stdout)).toHaveLength(2);
    });

    test('When stdin holds one pretty-printed object, then it is one submission', async () => {
      const input = JSON.stringify({ artist: 'Pretty', title: 'Printed', bpm: '128' }, null, 2) + '\n';
      const result = await runCli(['submit', '-', '--json'], { env: env(), input });
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(parseLines(result.stdout)).toEqual([{ dbid: expect.any(Number), processed_metadata: { artist: 'Pretty', title: 'Printed', bpm: 128 } }]);
    });

    test('When the first line is broken and the rest is NDJSON, then the rest still goes in', async () => {
      const input = '{"artist": oops\n{"artist":"After","title":"Broken"}\n';
      const result = await runCli(['submit', '-'], { env: env(), input });
      expect(result.code).toBe(5);
      expect(result.stderr).toMatch(/^svc: line 1: invalid JSON/);
      expect(result.stdout).toMatch(/^#\d+ After - Broken\n$/);
    });

    test('When options are given with -, then their fields are added to every line', async () => {
      const input = '{"artist":"Deck","title":"One"}\n{"artist":"Deck","title":"Two"}\n';
      const result = await runCli(['submit', '-', '--json', '--field', 'deck=2'], { env: env(), input });
      expect(result.code).toBe(0);
      expect(parseLines(result.stdout).map((response) => (response.processed_metadata as Record<string, unknown>).deck)).toEqual(['2', '2']);
    });

    test('When the secret is wrong, then every line fails and the exit code is the most severe failure (3)', async () => {
      const result = await runCli(['submit', '-'], { env: env({ SVC_SECRET: 'wrong' }), input: ndjson });
      expect(result).toMatchObject({ code: 3, stdout: '' });
      expect(result.stderr).toMatch(/line 1: authentication refused \(403\)/);
      expect(result.stderr).toMatch(/line 3: invalid JSON/);
    });

    test('When stdin is empty, then nothing is submitted and it exits 0', async () => {
      const result = await runCli(['submit', '-'], { env: env(), input: '' });
      expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    });
  });
});
