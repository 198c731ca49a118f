import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// docs/architecture.md names the files and symbols of a submission's path, the layout and the
// recipes: every one it names must exist, so the page cannot drift from the code unnoticed.

const root = path.resolve(__dirname, '../..');
const page = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
const quoted = [...page.matchAll(/`([^`\n]+)`/g)].map((match) => match[1] ?? '');

/** Paths the page names: in backticks, or as a layout row's first column. */
const layoutRows = [...page.matchAll(/^((?:src|test|bench|examples|public|bin)\/[\w./-]*)/gm)].map((match) => match[1] ?? '');
const named = new Set(
  [...quoted.flatMap((text) => text.split(/[\s,()]+/)), ...layoutRows]
    .map((word) => word.replace(/[.:;]+$/, ''))
    .filter((word) => /^(src|test|bench|examples|docs|\.ci)\/[\w./-]+$/.test(word) && !word.includes('<')),
);

/** Identifiers the page names in backticks (`submitTrack`, `PlayLog`): some file of src/ or test/ declares or uses each. */
const symbols = new Set(quoted.filter((text) => /^[a-z]+[A-Z]\w*$|^[A-Z][a-z]+[A-Z]\w*$/.test(text) && !text.includes('.')));
const sources = execFileSync('git', ['ls-files', 'src', 'test'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((file) => file.endsWith('.ts'))
  .map((file) => readFileSync(path.join(root, file), 'utf8'))
  .join('\n');

describe('docs/architecture.md', () => {
  it('names paths at all (the reader below finds them)', () => {
    expect(named.size).toBeGreaterThan(50);
    expect(symbols.size).toBeGreaterThan(5);
  });

  it.each([...named])('When it names %s, then that path exists', (name) => {
    expect(existsSync(path.join(root, name.replace(/\/$/, '')))).toBe(true);
  });

  it('When a middleware file exists, then the Layout row of src/server/middleware/ names it', () => {
    const row = (/^src\/server\/middleware\/ {2,}([\s\S]*?)\n(?=src\/)/m.exec(page)?.[1] ?? '').replace(/\s+/g, ' ').toLowerCase();
    expect(row).not.toBe('');
    const files = readdirSync(path.join(root, 'src/server/middleware')).map((file) => file.replace(/\.ts$/, ''));
    const unnamed = files.filter((name) => ![name, name.replaceAll('-', ' '), name.split('-').pop() ?? name].some((word) => row.includes(word)));
    expect(unnamed).toEqual([]);
  });

  it.each([...symbols])('When it names `%s`, then the code has that symbol', (symbol) => {
    expect(sources).toMatch(new RegExp(`\\b${symbol}\\b`));
  });
});
