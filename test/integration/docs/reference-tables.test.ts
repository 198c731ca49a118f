import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import type { SchemaDescription, SchemaObjectDescription } from 'yup';
import { defaultDatabasePath } from '../../../src/config/defaults';
import { configSchema } from '../../../src/config/schema';
import { ERRORS } from '../../../src/errors';

// One home per fact (README.md "Documentation"): each error code, status and message is stated in
// docs/http-api.md "Errors", each config key and default in docs/configuration.md "Keys" and in
// .svcrc.example, and the tests compare each of them with the code both ways. The comparisons
// are pure functions, so a changed default (a mutation of the code or of the page) is shown to
// fail them. What changed and when lives in CHANGELOG.md, not in a page's "additions" section.

const ROOT = path.join(__dirname, '../../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
type Plain = Record<string, unknown>;

/** The lines of the table under `heading` (up to the next heading). */
function tableRows(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const after = markdown.slice(start + heading.length + 2);
  const end = after.search(/\n#{1,6} /);
  const section = end < 0 ? after : after.slice(0, end);
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('|---'))
    .slice(1)
    .map((line) =>
      line
        .slice(2, -2)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
}

/** Every leaf key of the config schema, dotted; a list is one key. */
function schemaKeys(description: SchemaObjectDescription = configSchema.describe(), prefix = ''): string[] {
  return Object.entries(description.fields).flatMap(([name, field]) => {
    const key = `${prefix}${name}`;
    const nested = field as SchemaDescription & Partial<SchemaObjectDescription>;
    return nested.type === 'object' && nested.fields ? schemaKeys(nested as SchemaObjectDescription, `${key}.`) : [key];
  });
}

function valueAt(target: unknown, key: string): unknown {
  return key.split('.').reduce<unknown>((node, part) => (typeof node === 'object' && node !== null ? (node as Plain)[part] : undefined), target);
}

function codeDefaults(): Map<string, unknown> {
  const defaults = configSchema.getDefault() as Plain;
  return new Map(schemaKeys().map((key) => [key, valueAt(defaults, key)]));
}

const UNSET = Symbol('unset');
/** A key .svcrc.example shows commented out: not set there, so the default applies, whatever it is. */
const COMMENTED = Symbol('commented out');

/** A default as the table writes it: `""`, `unset ...`, `["*"]`, `https://...`, 10000, true. */
function parseDocDefault(cell: string, key: string): unknown {
  const text = cell.trim();
  if (/^\$XDG_DATA_HOME\/svc\/svc\.db/.test(text.replace(/`/g, ''))) return key === 'database.location' ? defaultDatabasePath() : text;
  if (/^unset\b/.test(text)) return UNSET;
  const bare = text.replace(/\s+\([^)]*\)$/, '');
  const value = bare.replace(/^`(.*)`$/, '$1');
  if (value === '""') return '';
  if (/^(true|false)$/.test(value)) return value === 'true';
  // `123` in backticks is a string (TheAudioDB's public key); 123 bare is a number.
  if (/^-?\d+(\.\d+)?$/.test(value)) return bare.startsWith('`') ? value : Number(value);
  if (/^\[.*\]$/.test(value)) return JSON.parse(value) as unknown;
  return value;
}

/** Keys and defaults of docs/configuration.md "Keys": a row may list several keys and as many defaults. */
function documentedDefaults(markdown: string): Map<string, unknown> {
  const documented = new Map<string, unknown>();
  for (const [keysCell = '', defaultsCell = ''] of tableRows(markdown, '## Keys')) {
    const keys = [...keysCell.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '');
    const defaults = keys.length > 1 ? defaultsCell.split(/, (?![^`]*`(?:,|$))/) : [defaultsCell];
    keys.forEach((key, index) => documented.set(key, parseDocDefault(defaults[index] ?? '', key)));
  }
  return documented;
}

/** What disagrees between a page (or file) and the code: keys on one side only, defaults that differ. */
function compareDefaults(documented: ReadonlyMap<string, unknown>, code: ReadonlyMap<string, unknown>): string[] {
  const problems: string[] = [];
  for (const key of code.keys()) if (!documented.has(key)) problems.push(`${key}: in the schema, not documented`);
  for (const [key, written] of documented) {
    if (!code.has(key)) {
      problems.push(`${key}: documented, not in the schema`);
      continue;
    }
    const actual = code.get(key);
    const unsetMatches = written === COMMENTED || (written === UNSET && (actual === undefined || actual === ''));
    if (!unsetMatches && JSON.stringify(written) !== JSON.stringify(actual)) {
      problems.push(`${key}: documented default ${JSON.stringify(written === UNSET ? 'unset' : written)}, code default ${JSON.stringify(actual)}`);
    }
  }
  return problems;
}

/** The codes of docs/http-api.md "Errors" with their status and message. */
function documentedErrors(markdown: string): Map<string, { status: number; message: string }> {
  return new Map(
    tableRows(markdown, '## Errors').map(([code = '', status = '', message = '']) => [code.replace(/`/g, ''), { status: Number(status), message }]),
  );
}

function compareErrors(
  documented: ReadonlyMap<string, { status: number; message: string }>,
  code: Readonly<Record<string, { status: number; message: string }>>,
): string[] {
  const problems: string[] = [];
  for (const name of Object.keys(code)) if (!documented.has(name)) problems.push(`${name}: in src/errors.ts, not in the table`);
  for (const [name, row] of documented) {
    const spec = Object.hasOwn(code, name) ? code[name] : undefined;
    if (!spec) problems.push(`${name}: in the table, not in src/errors.ts`);
    else if (spec.status !== row.status || spec.message !== row.message) {
      problems.push(`${name}: table says ${row.status} "${row.message}", code says ${spec.status} "${spec.message}"`);
    }
  }
  return problems;
}

/**
 * The keys .svcrc.example sets, with their values, and the keys it shows commented out
 * (`# location: ...`, a lower-case name then a colon) with no value. A list is one key.
 */
function exampleKeys(text: string): Map<string, unknown> {
  const keys = new Map<string, unknown>();
  const walk = (node: unknown, prefix: string) => {
    for (const [name, value] of Object.entries(node as Plain)) {
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) walk(value, `${prefix}${name}.`);
      else keys.set(`${prefix}${name}`, value);
    }
  };
  walk(yaml.load(text) ?? {}, '');
  const parents: { indent: number; key: string }[] = [];
  for (const line of text.split('\n')) {
    const live = /^( *)([A-Za-z][A-Za-z0-9]*):/.exec(line);
    const commented = /^( *)#( +)([a-z][A-Za-z0-9]*):( |$)/.exec(line);
    if (!live && !commented) continue;
    const indent = live ? (live[1] ?? '').length : (commented?.[1] ?? '').length + (commented?.[2] ?? '').length - 1;
    const name = live ? (live[2] ?? '') : (commented?.[3] ?? '');
    while (parents.length > 0 && (parents.at(-1)?.indent ?? 0) >= indent) parents.pop();
    const parent = parents.at(-1)?.key;
    // Inside a list (an example output) the names are the list items' own.
    if (parent !== undefined && keys.has(parent) && Array.isArray(keys.get(parent))) continue;
    const key = parent === undefined ? name : `${parent}.${name}`;
    parents.push({ indent, key });
    if (commented && !keys.has(key) && !text.includes(`\n${' '.repeat(indent)}${name}:`)) keys.set(key, COMMENTED);
  }
  // A parent of set keys is no key of its own.
  for (const key of [...keys.keys()]) if ([...keys.keys()].some((other) => other.startsWith(`${key}.`))) keys.delete(key);
  return keys;
}

describe('one home per fact: the reference tables against the code, both ways', () => {
  test('When the error catalogue has a code, then docs/http-api.md lists it with its status and message, and lists no other', () => {
    const documented = documentedErrors(read('docs/http-api.md'));
    expect(documented.size).toBeGreaterThan(20);
    expect(compareErrors(documented, ERRORS)).toEqual([]);
  });

  test('When a code changes its status or a row names a code that is gone, then the comparison says so', () => {
    const documented = documentedErrors(read('docs/http-api.md'));
    const mutated = { ...ERRORS, NOT_FOUND: { ...ERRORS.NOT_FOUND, status: 410 }, GONE_CODE: { status: 410, message: 'Gone' } };
    expect(compareErrors(documented, mutated)).toEqual([
      'GONE_CODE: in src/errors.ts, not in the table',
      'NOT_FOUND: table says 404 "Not found", code says 410 "Not found"',
    ]);
  });

  test('When the config schema has a key, then docs/configuration.md "Keys" lists it with the default the code has, and lists no other', () => {
    const documented = documentedDefaults(read('docs/configuration.md'));
    expect(documented.get('port')).toBe(8899);
    expect(compareDefaults(documented, codeDefaults())).toEqual([]);
  });

  test('When a default is changed in the code or on the page (a mutation), then the comparison fails, naming the key', () => {
    const code = codeDefaults();
    const documented = documentedDefaults(read('docs/configuration.md'));
    const mutatedCode = new Map(code).set('limits.maxFields', 201);
    expect(compareDefaults(documented, mutatedCode)).toEqual(['limits.maxFields: documented default 200, code default 201']);
    const mutatedPage = documentedDefaults(read('docs/configuration.md').replace('| `dedupeSeconds` | 600 |', '| `dedupeSeconds` | 300 |'));
    expect(compareDefaults(mutatedPage, code)).toEqual(['dedupeSeconds: documented default 300, code default 600']);
    const withoutRow = documentedDefaults(read('docs/configuration.md').replace(/^\| `pages\.idleText` .*\n/m, ''));
    expect(compareDefaults(withoutRow, code)).toEqual(['pages.idleText: in the schema, not documented']);
  });

  test('When the config schema has a key, then .svcrc.example sets it to its default or shows it commented out, and has no other key', () => {
    const example = exampleKeys(read('.svcrc.example'));
    expect(example.get('limits.maxRecordBytes')).toBe(65536);
    const code = codeDefaults();
    // database.location depends on the machine: the example shows it commented out.
    expect(example.get('database.location')).toBe(COMMENTED);
    expect(compareDefaults(example, code)).toEqual([]);
    const mutated = exampleKeys(read('.svcrc.example').replace('  maxListItems: 100\n', '  maxListItems: 99\n  maxListItem: 1\n'));
    expect(compareDefaults(mutated, code)).toEqual([
      'limits.maxListItems: documented default 99, code default 100',
      'limits.maxListItem: documented, not in the schema',
    ]);
  });

  const pages = fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);

  /** Config keys whose number or boolean default `markdown` states again, inline or in a table row. */
  function restatedDefaults(markdown: string): string[] {
    const restated: string[] = [];
    for (const [key, value] of codeDefaults()) {
      if (typeof value !== 'number' && typeof value !== 'boolean') continue;
      const quoted = key.replace(/\./g, '\\.');
      const inline = new RegExp(`\`${quoted}\`[^.\\n|]{0,12}\\(default:? \`?${String(value)}\\b`);
      const row = new RegExp(`^\\| \`${quoted}\` \\| \`?${String(value)}\`? \\|`, 'm');
      if (inline.test(markdown) || row.test(markdown)) restated.push(key);
    }
    return restated;
  }

  test('When a page restates the default of a config key ("`key` (default N)" or a table row with the value), then it is named: it links to the table instead', () => {
    const restated = [...pages, 'README.md']
      .filter((file) => file !== 'docs/configuration.md')
      .flatMap((page) => restatedDefaults(read(page)).map((key) => `${page}: ${key}`));
    expect(restated).toEqual([]);
    expect(restatedDefaults('within `dedupeSeconds` (default 600) of the current track')).toEqual(['dedupeSeconds']);
    expect(restatedDefaults('| `limits.maxConnections` | 10000 | the oldest connection ... |')).toEqual(['limits.maxConnections']);
  });

  test('When something changed, then CHANGELOG.md (Keep a Changelog) says so, and no page carries a "Reference additions" section', () => {
    const changelog = read('CHANGELOG.md');
    expect(changelog).toMatch(/^# Changelog\n/);
    expect(changelog).toContain('keepachangelog.com');
    expect(changelog).toMatch(/^## \[Unreleased\]$/m);
    for (const heading of changelog.matchAll(/^### (.+)$/gm)) expect(['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security']).toContain(heading[1]);
    expect(pages.filter((page) => /^#{1,6} Reference additions/m.test(read(page)))).toEqual([]);
  });
});
