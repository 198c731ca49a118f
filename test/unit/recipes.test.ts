import fs from 'node:fs';
import path from 'node:path';
import { OUTPUT_BLOCKS } from '../../src/cli/commands/output-blocks';
import { OUTPUT_TYPES } from '../../src/config/output-types';
import { REPORT_FORMATS } from '../../src/reports/format';
import { FORMATS } from '../../src/reports/formats';
import { NowPlaying } from '../../src/domain/current-track';
import { OutputDispatcher } from '../../src/outputs/dispatcher';
import { trackDataOf, type Delivery, type Output } from '../../src/outputs/output';
import { openSqliteStore } from '../../src/store/open-store';
import type { OutputMessage } from '../../src/store/outputs';
import { until } from '../helpers/eventually';
import { silentLogger } from '../helpers/silent-logger';

// The recipes of docs/architecture.md "Recipes", done once: every file a list names exists,
// every existing output type and command sits in each place its list names, and a fake output
// type written by the first list's steps is delivered to like any other.

const ROOT = path.join(__dirname, '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const architecture = read('docs/architecture.md');

/** The text of one recipe, from its heading to the next one. */
function recipe(title: string): string {
  const start = architecture.indexOf(`### ${title}\n`);
  expect(start).toBeGreaterThan(-1);
  const end = architecture.indexOf('\n#', start + 4);
  return architecture.slice(start, end === -1 ? undefined : end);
}

/** Every file path a recipe names in backticks, placeholders (`<type>`) left out. */
function namedFiles(text: string): string[] {
  return [...text.matchAll(/`((?:src|test|docs)\/[^`\s]+|\.[a-z-]+\.c?js|\.svcrc\.example)`/g)]
    .map((match) => match[1] ?? '')
    .filter((file) => !file.includes('<'));
}

describe('the recipes of docs/architecture.md', () => {
  it.each(['Adding an output type', 'Adding a command', 'Adding a storage backend', 'Adding a report format', 'Adding an input'])(
    'When "%s" names a file, then the file exists',
    (title) => {
      const files = namedFiles(recipe(title));
      expect(files.length).toBeGreaterThan(2);
      expect(files.filter((file) => !fs.existsSync(path.join(ROOT, file)))).toEqual([]);
    },
  );

  it('When an output type exists, then it sits in each place "Adding an output type" names', () => {
    // The one list is OUTPUT_TYPE_FACTS; the factory and the blocks are Records of it (the compiler
    // checks them), the files and the docs are checked here.
    const factory = read('src/outputs/create-outputs.ts');
    const docs = read('docs/outputs.md');
    const typeRow = docs.split('\n').find((line) => line.startsWith('| `type` |')) ?? '';
    const missing = OUTPUT_TYPES.flatMap((type) => [
      ...(new RegExp(`\\n  ${type}: \\(`).test(factory) ? [] : [`${type}: create-outputs.ts BUILDERS`]),
      ...(type in OUTPUT_BLOCKS ? [] : [`${type}: output-blocks.ts`]),
      ...(fs.existsSync(path.join(ROOT, 'src/outputs', `${type}.ts`)) ? [] : [`${type}: src/outputs/${type}.ts`]),
      ...(typeRow.includes(`\`${type}\``) ? [] : [`${type}: docs/outputs.md "Configuration"`]),
    ]);
    expect(missing).toEqual([]);
  });

  it('When the docs list the output types, then each list is exactly the types of src/config/output-types.ts', () => {
    const backticked = (line: string) => [...line.matchAll(/`([a-z]+)`/g)].map((match) => match[1] ?? '');
    const typeRow = read('docs/outputs.md')
      .split('\n')
      .find((line) => line.startsWith('| `type` |'));
    const configRow = read('docs/configuration.md')
      .split('\n')
      .find((line) => line.startsWith('| `outputs` |'));
    const configTypes = /with `type` one of (.*?) and that type's keys/.exec(configRow ?? '')?.[1] ?? '';
    const openapiEnum = /type: \{ enum: \[(webhook[^\]]*)\] \}/.exec(read('docs/openapi.yaml'))?.[1] ?? '';
    const types = [...OUTPUT_TYPES].sort();
    expect(
      backticked(typeRow ?? '')
        .filter((name) => name !== 'type')
        .sort(),
    ).toEqual(types);
    expect(backticked(configTypes).sort()).toEqual(types);
    expect(openapiEnum.split(', ').sort()).toEqual(types);
  });

  it('When a command is registered, then it sits in each place "Adding a command" names', () => {
    const main = read('src/cli/main.ts');
    const docs = read('docs/cli.md');
    const commands = fs
      .readdirSync(path.join(ROOT, 'src/cli/commands'))
      .filter((file) => /export function register\w+\(/.test(read(`src/cli/commands/${file}`)))
      .map((file) => file.replace(/\.ts$/, ''));
    expect(commands.length).toBeGreaterThan(5);
    const missing = commands.flatMap((command) => {
      const register = /export function (register\w+)\(/.exec(read(`src/cli/commands/${command}.ts`))?.[1] ?? '';
      return [
        ...(main.includes(`${register}(program`) ? [] : [`${command}: src/cli/main.ts`]),
        ...(docs.includes(`## \`svc ${command}\``) ? [] : [`${command}: docs/cli.md`]),
      ];
    });
    expect(missing).toEqual([]);
    // Completion last: its script lists the commands registered before it.
    expect(main.lastIndexOf('registerCompletion(program')).toBeGreaterThan(main.lastIndexOf('registerWatchImages(program'));
  });

  it('When a store has a SQLite body, then its contract is a neutral file and PostgreSQL keeps it too, as "Adding a storage backend" says', () => {
    // backup.ts is SQLite's own: svc backup copies the file; PostgreSQL's copy is pg_dump (docs/running.md "Backup").
    const bodies = fs.readdirSync(path.join(ROOT, 'src/store/sqlite')).filter((file) => !['database.ts', 'sqlite-store.ts', 'backup.ts'].includes(file));
    expect(bodies.length).toBeGreaterThan(5);
    const missing = bodies.flatMap((file) => [
      ...(fs.existsSync(path.join(ROOT, 'src/store', file)) ? [] : [`src/store/${file}`]),
      ...(fs.existsSync(path.join(ROOT, 'src/store/postgres', file)) ? [] : [`src/store/postgres/${file}`]),
    ]);
    expect(missing).toEqual([]);
    const layers = read('.dependency-cruiser.cjs');
    expect(layers).toContain("['store/sqlite', 'store/postgres']");
  });

  it('When a report format exists, then it sits in each place "Adding a report format" names', () => {
    const table = read('docs/reports.md');
    const openapiEnums = [...read('docs/openapi.yaml').matchAll(/name: format, in: path.*?enum: \[([^\]]*)\]/g)].map((match) => match[1] ?? '');
    const httpApi = read('docs/http-api.md');
    const cli = read('docs/cli.md');
    const fixtures = fs.readdirSync(path.join(ROOT, 'test/fixtures/reports'));
    const golden = read('test/unit/reports/golden.test.ts');
    expect(openapiEnums.length).toBeGreaterThan(0);
    const missing = REPORT_FORMATS.flatMap((format) => [
      ...(format in FORMATS ? [] : [`${format}: src/reports/formats/index.ts FORMATS`]),
      ...(fs.existsSync(path.join(ROOT, 'src/reports/formats', `${format}.ts`)) ? [] : [`${format}: src/reports/formats/${format}.ts`]),
      ...(table.includes(`\n| \`${format}\` |`) ? [] : [`${format}: docs/reports.md table`]),
      ...(openapiEnums.every((list) => list.split(', ').includes(format)) ? [] : [`${format}: docs/openapi.yaml format enum`]),
      ...(httpApi.includes(`\`${format}\``) ? [] : [`${format}: docs/http-api.md`]),
      ...(cli.includes(`\`${format}\``) ? [] : [`${format}: docs/cli.md`]),
      ...(fixtures.some((file) => file.startsWith(`${format}.`)) ? [] : [`${format}: test/fixtures/reports/${format}.<ext>`]),
      ...(golden.includes(`'${format}'`) ? [] : [`${format}: test/unit/reports/golden.test.ts`]),
    ]);
    expect(missing).toEqual([]);
    expect(openapiEnums.map((list) => list.split(', ').sort())).toEqual(openapiEnums.map(() => [...REPORT_FORMATS].sort()));
  });

  it('When the Icecast source listener is an input, then it is built as "Adding an input" says', () => {
    // Step 2: the listener is handed a SubmitFields, never the store or the config.
    const ingest = fs.readdirSync(path.join(ROOT, 'src/ingest')).map((file) => [file, read(`src/ingest/${file}`)] as const);
    const reachesOut = ingest.filter(([, text]) => /from '\.\.\/(store|config)\//.test(text)).map(([file]) => file);
    expect(reachesOut).toEqual([]);
    expect(read('src/ingest/listener.ts')).toMatch(/\n {2}submit: SubmitFields;/);
    // Step 3: started after the server with a submitter of the one use case, closed before it.
    const root = read('src/app/start-app.ts');
    expect(root.indexOf('startIcecastSource(config')).toBeGreaterThan(root.indexOf('await startServer('));
    expect(root).toMatch(/await icecast\?\.close\(\);[\s\S]{0,200}?await server\.close\(\);/);
    expect(root).toMatch(/submit: heardFromSource\(\s*fieldsSubmitter\(/);
    expect(read('src/pipeline/submit-fields.ts')).toMatch(/trackInFlight\(submitTrack\(/);
  });

  it('When a fake output type is written by the recipe (an Output, handed to the dispatcher), then a stored track is delivered to it and its status reads ok', async () => {
    // Step 2: the module behind the one interface. Steps 1 and 3 (the schema's type list and the
    // factory's case) are config plumbing, checked above for every real type.
    const sent: OutputMessage[] = [];
    const fake: Output = {
      name: 'fake',
      type: 'url',
      feeds: { changed: 'track.changed' },
      latestOnly: false,
      target: 'fake://nowhere',
      send(message): Promise<Delivery> {
        sent.push(message);
        return Promise.resolve({ outcome: 'delivered', status: 200 });
      },
      close: () => Promise.resolve(),
    };
    const store = openSqliteStore(':memory:', { maxImageBytes: 1024 * 1024 });
    const nowPlaying = new NowPlaying(null);
    const dispatcher = new OutputDispatcher({
      outputs: [fake],
      store: store.outputs,
      nowPlaying,
      logger: silentLogger,
      holdMs: 1000,
      retryForSeconds: new Map(),
      pollMs: 50,
    });
    try {
      const record = await store.tracks.insert({
        receivedSeq: await store.tracks.nextReceivedSeq(),
        receivedAt: new Date().toISOString(),
        metadata: { artist: 'Recipe', title: 'Followed' },
      });
      nowPlaying.offer(record);
      await until(() => sent.length === 1, 'the fake output was sent the track', 10_000);
      expect(trackDataOf(sent[0] ?? { payload: '{}' })).toMatchObject({ dbid: record.dbid, artist: 'Recipe', title: 'Followed' });
      await until(async () => (await dispatcher.status())[0]?.pending === 0, 'the delivery is recorded', 10_000);
      expect((await dispatcher.status())[0]).toMatchObject({ name: 'fake', state: 'ok', pending: 0 });
    } finally {
      await dispatcher.close();
      await store.close();
    }
  });
});
