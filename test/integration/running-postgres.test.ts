import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { postJson } from '../helpers/http';
import { describeWithPeers } from '../helpers/peers';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';
import { makeTempDir } from '../helpers/temp-dir';
import { startTestServer, type TestServer } from '../helpers/test-server';

// docs/running.md "PostgreSQL" (backup and restore) and "Pruning old history", run as the page
// writes them: each `$ ` line of its console blocks goes to bash with only the database URL
// replaced by this run's own databases, and what the page shows after a command is what it prints.

const DOC = fs.readFileSync(path.join(__dirname, '../../docs/running.md'), 'utf8');
const DOC_URL = 'postgres://svc@127.0.0.1:5432/svc';

interface Step {
  command: string;
  output: string[];
}

/** The console blocks under `heading` (up to the next heading of its level or above). */
function consoleSteps(heading: string): Step[] {
  const start = DOC.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`docs/running.md has no "${heading}"`);
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  const rest = DOC.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`\\n#{1,${level}} `));
  const section = end < 0 ? rest : rest.slice(0, end);
  const steps: Step[] = [];
  for (const [, block] of section.matchAll(/```console\n([\s\S]*?)```/g)) {
    for (const line of (block ?? '').split('\n').filter((text) => text !== '')) {
      if (line.startsWith('$ ')) steps.push({ command: line.slice(2), output: [] });
      else steps.at(-1)?.output.push(line);
    }
  }
  return steps;
}

describeWithPeers(['postgresql', 'pg_dump', 'pg_restore', 'psql'], 'docs/running.md on PostgreSQL, as written', () => {
  jest.setTimeout(60_000);
  let source: TestDatabase;
  let restored: TestDatabase;
  let server: TestServer;
  const home = makeTempDir('svc-running-');
  const bash = (command: string, url: string) =>
    execFileSync('bash', ['-c', command.replaceAll(DOC_URL, url)], { cwd: home.dir, env: { ...process.env, HOME: home.dir }, encoding: 'utf8' });

  beforeAll(async () => {
    source = await createTestDatabase();
    restored = await createTestDatabase();
    server = await startTestServer({ config: { database: { location: source.url } } });
    for (const title of ['Old One', 'Old Two', 'Current']) {
      expect((await postJson(`${server.url}/v1/remoteinput`, { artist: 'Artist', title })).status).toBe(200);
    }
    await source.query("UPDATE tracks SET received_at = '2020-01-0' || dbid || 'T10:00:00.000Z' WHERE metadata->>'title' LIKE 'Old%'");
  });
  afterAll(async () => {
    await server?.close();
    await source?.drop();
    await restored?.drop();
    home.cleanup();
  });

  it('When the backup commands run while svc runs, then the dump is readable and restores every track into another database', async () => {
    const [dump, check, ...others] = consoleSteps('### PostgreSQL');
    expect(dump?.command).toMatch(/^\(umask 077 && mkdir -p ~\/backups && pg_dump --format=custom /);
    expect(bash(dump?.command ?? '', source.url)).toBe('');
    // The dump holds the listener-address key: its owner's alone (docs/running.md "PostgreSQL").
    const dumps = fs.readdirSync(path.join(home.dir, 'backups'));
    expect(dumps).toHaveLength(1);
    expect(fs.statSync(path.join(home.dir, 'backups', dumps[0] ?? '')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(home.dir, 'backups')).mode & 0o777).toBe(0o700);
    expect(
      bash(check?.command ?? '', source.url)
        .trimEnd()
        .split('\n'),
    ).toEqual(check?.output);
    const [restore] = others;
    expect(restore?.command).toMatch(/^pg_restore --clean --if-exists --no-owner /);
    bash(restore?.command ?? '', restored.url);
    const titles = async (database: TestDatabase) =>
      (await database.query<{ title: string }>("SELECT metadata->>'title' AS title FROM tracks ORDER BY dbid")).map((row) => row.title);
    expect(await titles(restored)).toEqual(await titles(source));
    expect(await titles(restored)).toHaveLength(3);
  });

  it('When the pruning SQL runs while svc runs, then the tracks older than 90 days go, the current one stays, and psql prints what the page shows', async () => {
    const steps = consoleSteps('## Pruning old history').filter((step) => step.command.includes('postgres'));
    const [show, run] = steps;
    expect(show?.command).toBe('cat prune-postgres.sql');
    fs.writeFileSync(path.join(home.dir, 'prune-postgres.sql'), `${(show?.output ?? []).join('\n')}\n`);
    expect(
      bash(run?.command ?? '', source.url)
        .trimEnd()
        .split('\n'),
    ).toEqual(run?.output);
    const left = await source.query<{ title: string }>("SELECT metadata->>'title' AS title FROM tracks");
    expect(left.map((row) => row.title)).toEqual(['Current']);
    expect((await postJson(`${server.url}/v1/remoteinput`, { artist: 'Artist', title: 'After the prune' })).status).toBe(200);
  });
});
