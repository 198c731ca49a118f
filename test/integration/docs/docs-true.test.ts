import fs from 'node:fs';
import path from 'node:path';
import type { SchemaObjectDescription, SchemaDescription } from 'yup';
import { configSchema } from '../../../src/config/schema';
import { ERRORS } from '../../../src/errors';
import { runCli } from '../../helpers/run-cli';

// The docs in the repository are pinned to the code, both ways where both can be read:
// docs/http-api.md's error table against the error catalogue (src/errors.ts), docs/cli.md
// against `svc --help` and each command's help, docs/configuration.md against the config schema,
// every relative link of README.md and docs/ against the files and headings it points at, and
// every path of the tree they name in code against the tree.

const ROOT = path.join(__dirname, '../../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** The status column of the table under a heading (`| `CODE` | status | message | when |`). */
function statusesOfTable(markdown: string, heading: string): number[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const after = markdown.slice(start + heading.length + 2);
  const section = after.slice(0, after.search(/\n#{1,6} /) >>> 0 || after.length);
  return [...section.matchAll(/^\| `[A-Z_]+` \| (\d{3}) \|/gm)].map((match) => Number(match[1]));
}

/** Every leaf key of the config schema, dotted (`limits.maxFields`); a list is one key. */
function configKeys(description: SchemaObjectDescription, prefix = ''): string[] {
  return Object.entries(description.fields).flatMap(([name, field]) => {
    const key = `${prefix}${name}`;
    const nested = field as SchemaDescription & Partial<SchemaObjectDescription>;
    return nested.type === 'object' && nested.fields ? configKeys(nested as SchemaObjectDescription, `${key}.`) : [key];
  });
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** A page's headings as written, outside code blocks (a `# comment` in a YAML example is none). */
function headingTexts(markdown: string): string[] {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '');
  return [...withoutCode.matchAll(/^#{1,6} (.+)$/gm)].map((match) => (match[1] ?? '').trim());
}

function headingsOf(markdown: string): Set<string> {
  return new Set(headingTexts(markdown).map(anchorOf));
}

describe('docs/ against the code', () => {
  test('When the error catalogue answers a status, then docs/http-api.md lists it, and lists no other', () => {
    const documented = statusesOfTable(read('docs/http-api.md'), '## Errors');
    const answered = [...new Set(Object.values(ERRORS).map((spec) => spec.status))];
    expect([...new Set(documented)].sort()).toEqual(answered.sort());
  });

  test('When svc --help lists a command, then docs/cli.md documents it and every one of its flags', async () => {
    const help = await runCli(['--help']);
    const commands = [...help.stdout.matchAll(/^ {2}([a-z][a-z-]*) /gm)].map((match) => match[1] ?? '').filter((name) => name !== 'help');
    expect(commands.length).toBeGreaterThan(4);
    const cliDoc = read('docs/cli.md');
    const missing: string[] = [];
    for (const command of commands) {
      if (!cliDoc.includes(`svc ${command}`)) missing.push(`svc ${command}`);
      const commandHelp = await runCli([command, '--help']);
      for (const [, flag] of commandHelp.stdout.matchAll(/^ {2}(?:-\w, )?(--[a-z][a-z-]*)/gm)) {
        if (flag !== '--help' && !cliDoc.includes(`\`${flag}`) && !cliDoc.includes(` ${flag}`)) missing.push(`svc ${command} ${flag}`);
      }
    }
    expect(missing).toEqual([]);
  });

  test('When the config schema has a key, then docs/configuration.md documents it', () => {
    const configDoc = read('docs/configuration.md');
    const keys = configKeys(configSchema.describe());
    expect(keys).toContain('limits.maxFields');
    expect(keys.filter((key) => !configDoc.includes(`\`${key}\``))).toEqual([]);
  });

  const pages = [
    'README.md',
    ...fs
      .readdirSync(path.join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ];

  test('When README.md or a docs/ page links to a file or a heading, then it exists', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const markdown = read(page).replace(/```[\s\S]*?```/g, '');
      for (const [, target] of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (!target || /^[a-z]+:/i.test(target)) continue;
        const [file, anchor] = target.split('#');
        const resolved = file ? path.join(path.dirname(page), file) : page;
        if (!fs.existsSync(path.join(ROOT, resolved))) broken.push(`${page}: ${target}`);
        else if (anchor && resolved.endsWith('.md') && !headingsOf(read(resolved)).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  test('When README.md or a docs/ page names a path of src/, test/, bench/ or examples/ in code, then it exists', () => {
    const missing: string[] = [];
    for (const page of pages) {
      for (const [, file] of read(page).matchAll(/`((?:src|test|bench|examples)\/[\w./-]*)`/g)) {
        if (file && !fs.existsSync(path.join(ROOT, file))) missing.push(`${page}: ${file}`);
      }
    }
    expect(missing).toEqual([]);
  });

  test('When code, a test or a benchmark cites docs/<page>.md "Heading", then that page has that heading', () => {
    const sourceFiles = (dir: string): string[] =>
      fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
        const file = `${dir}/${entry.name}`;
        if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'results' ? [] : sourceFiles(file);
        return /\.(ts|js)$/.test(entry.name) ? [file] : [];
      });
    const headingsByPage = new Map<string, Set<string>>();
    const headings = (page: string) => {
      if (!headingsByPage.has(page)) headingsByPage.set(page, new Set(headingTexts(read(page))));
      return headingsByPage.get(page) ?? new Set<string>();
    };
    const wrong: string[] = [];
    for (const file of [...sourceFiles('src'), ...sourceFiles('test'), ...sourceFiles('bench'), '.ci/run']) {
      for (const [, page, quoted] of read(file).matchAll(/(docs\/[a-z-]+\.md) "([^"]+)"/g)) {
        // A heading may wrap onto the next comment line (`//`, ` * ` or SQL's `--`).
        const heading = quoted?.replace(/\s*\n\s*(?:\/\/|\*|--)?\s*/g, ' ');
        if (!page || !fs.existsSync(path.join(ROOT, page)) || !headings(page).has(heading)) wrong.push(`${file}: ${page} "${heading}"`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
