import { spawn } from 'node:child_process';
import { asObject, postJson, request } from '../helpers/http';
import { SVC_BIN, cleanEnv, runCli, type CliResult } from '../helpers/run-cli';
import fs from 'node:fs';
import path from 'node:path';
import { until } from '../helpers/eventually';
import { startServeProcess, stopServeProcess } from '../helpers/serve-process';
import { makeTempDir } from '../helpers/temp-dir';
import { startTestServer, type TestServer } from '../helpers/test-server';

// docs/first-hour.md "Templates" and "Streaming tracks in": {{field}} templates as What's Now
// Playing and playerctl write them, a template that names no known field refused with exit 2,
// and `svc submit - --parse` fed through a real shell pipe.

/** Runs a shell pipeline (sh -c) with `svc` standing for the real binary. */
function runPipeline(script: string, env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', script], { env: { ...cleanEnv(), ...env, SVC: `${process.execPath} ${SVC_BIN}` } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

describe('templates and --parse', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('When --format uses {{field}}, then the fields are filled, not printed literally', async () => {
    await postJson(`${t.url}/v1/remoteinput`, { artist: 'Moderat', title: 'A New Error', bpm: 122 });
    const result = await runCli(['last', '--url', t.url, '--format', '{{artist}} - {{title}} [{{ bpm }} BPM]']);
    expect([result.code, result.stdout, result.stderr]).toEqual([0, 'Moderat - A New Error [122 BPM]\n', '']);
  });

  it.each([
    [['last', '--format', '{{artsit}} - {{tilte}}'], /--format: the template names no field svc knows \(\{\{artsit\}\}, \{\{tilte\}\}\)/],
    [['history', '--format', 'now playing'], /--format: the template names no field/],
    [['submit', '-', '--parse', '{{song}}'], /--parse: the template names no field svc knows/],
  ])('When a template names no known field (%j), then one line says so and the exit code is 2', async (args, message) => {
    const result = await runCli([...args, '--url', t.url]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
  });

  it('When playerctl-style lines come through a real pipe, then each becomes a submission, and a line that does not fit is reported', async () => {
    const before = asObject((await request(`${t.url}/v1/last`)).json).dbid as number;
    // What `playerctl metadata --follow --format '{{artist}}\t{{title}}'` writes: one line per
    // change, fields apart by a tab, as the player changes tracks.
    const script = `{ printf 'Daft Punk\\tOne More Time\\n'; sleep 0.2; printf 'Burial\\tArchangel\\r\\n'; printf 'just a title\\n'; printf '\\n'; printf 'Röyksopp\\tEple\\n'; } | $SVC submit - --parse '{{artist}}\\t{{title}}'`;
    const result = await runPipeline(script, { SVC_URL: t.url });
    expect(result.stderr).toBe('svc: line 3: does not fit the --parse template\n');
    expect(result.code).toBe(5);
    expect(result.stdout.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^#\d+ Daft Punk - One More Time$/),
      expect.stringMatching(/^#\d+ Burial - Archangel$/),
      expect.stringMatching(/^#\d+ Röyksopp - Eple$/),
    ]);
    const history = asObject((await request(`${t.url}/v1/history?limit=3`)).json).tracks as Record<string, unknown>[];
    expect(history.map((track) => [track.artist, track.title])).toEqual([
      ['Röyksopp', 'Eple'],
      ['Burial', 'Archangel'],
      ['Daft Punk', 'One More Time'],
    ]);
    expect(history.every((track) => (track.dbid as number) > before)).toBe(true);
  });

  it('When --parse is given without -, then it says stdin is needed and exits 2', async () => {
    const result = await runCli(['submit', '--parse', '{{artist}}', '--url', t.url]);
    expect([result.code, result.stderr]).toEqual([2, 'svc: --parse reads stdin: give - as well (svc submit - --parse TEMPLATE)\n']);
  });

  it('When --format has a typo next to a known field (docs/first-hour.md "Templates"), then the line prints and stderr names the typo and the field meant', async () => {
    await postJson(`${t.url}/v1/remoteinput`, { artist: 'Four Tet', title: 'Baby' });
    const result = await runCli(['last', '--url', t.url, '--format', '{{artst}} - {{title}}']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Baby\n');
    expect(result.stderr).toBe(
      'svc: warning: --format: {{artst}} (did you mean {{artist}}?) is no field svc knows: it stays empty unless a track carries such a custom field\n',
    );
  });

  it('When --format names only known fields, or a custom field far from any known one, then the custom one is still named, the known ones never', async () => {
    const known = await runCli(['last', '--url', t.url, '--format', '{{artist}} - {{title}} ({{year}})']);
    expect([known.code, known.stderr]).toEqual([0, '']);
    const custom = await runCli(['last', '--url', t.url, '--format', '{{title}} {{showname}}']);
    expect(custom.stderr).toBe('svc: warning: --format: {{showname}} is no field svc knows: it stays empty unless a track carries such a custom field\n');
  });

  it('When --parse has a typo ({{titel}}), then svc submit warns before it sends', async () => {
    const result = await runPipeline(`printf 'Burial - Archangel\\n' | $SVC submit - --parse '{{artist}} - {{titel}}' --url ${t.url}`, {});
    expect(result.stderr).toContain('svc: warning: --parse: {{titel}} (did you mean {{title}}?) is no field svc knows');
  });

  it('When an output template has a typo next to a known field, then svc serve starts and logs one warning per template naming it', async () => {
    const temp = makeTempDir('svc-output-typo-');
    try {
      const outputs = [
        { name: 'dab', type: 'dls', path: path.join(temp.dir, 'dls.txt'), format: '{{artst}} - {{title}}' },
        { name: 'tunein', type: 'url', url: 'http://127.0.0.1:9/np?artist={{artist}}&title={{titel}}' },
      ];
      fs.writeFileSync(path.join(temp.dir, 'svc.json'), JSON.stringify({ outputs }));
      const serve = await startServeProcess(['--port', '0', '--db', ':memory:', '--offline', '--config', path.join(temp.dir, 'svc.json')]);
      try {
        await until(() => serve.stderr().includes('output tunein'), 'the url output warning');
        const warnings = serve
          .stderr()
          .split('\n')
          .filter((line) => line.includes(' warn output '));
        expect(warnings.map((line) => line.replace(/^.* warn /, ''))).toEqual([
          'output dab: format: {{artst}} (did you mean {{artist}}?) is no field svc knows: it stays empty unless a track carries such a custom field',
          'output tunein: url: {{titel}} (did you mean {{title}}?) is no field svc knows: it stays empty unless a track carries such a custom field',
        ]);
      } finally {
        await stopServeProcess(serve);
      }
    } finally {
      temp.cleanup();
    }
  });
});
