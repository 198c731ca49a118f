import fs from 'node:fs';
import path from 'node:path';

// What a build says it is (docs/running.md "Versions"): the release in package.json, plus the commit
// when svc runs from a git clone. A package installed from `npm pack` has no .git: the release alone.

const ROOT = path.join(__dirname, '..');

/** The application version, read once from package.json (GET /v1/status, User-Agent). */
export const VERSION: string = (() => {
  const file = path.join(ROOT, 'package.json');
  const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  const version = typeof parsed === 'object' && parsed !== null && 'version' in parsed ? parsed.version : undefined;
  return typeof version === 'string' ? version : '0.0.0';
})();

let commit: string | null | undefined;

/** The commit checked out (12 hex digits) when svc runs from a git clone or worktree, else null. Read once, from the files (no git binary). */
export function buildCommit(root: string = ROOT): string | null {
  if (root !== ROOT) return readCommit(root);
  commit ??= readCommit(root);
  return commit;
}

/** `0.2.0 (commit 0123456789ab)`, or `0.2.0` outside a clone: what --version, the banner and /v1/status show. */
export function versionText(): string {
  const hash = buildCommit();
  return hash === null ? VERSION : `${VERSION} (commit ${hash})`;
}

function readCommit(root: string): string | null {
  try {
    const gitDir = resolveGitDir(path.join(root, '.git'));
    if (gitDir === null) return null;
    const head = fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8').trim();
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    const hash = ref === undefined ? head : resolveRef(gitDir, ref);
    return hash !== null && /^[0-9a-f]{40,64}$/.test(hash) ? hash.slice(0, 12) : null;
  } catch {
    return null;
  }
}

/** `.git` is a folder in a clone, a file `gitdir: <path>` in a worktree or submodule. */
function resolveGitDir(dotGit: string): string | null {
  if (!fs.existsSync(dotGit)) return null;
  if (fs.statSync(dotGit).isDirectory()) return dotGit;
  const target = /^gitdir: (.+)$/m.exec(fs.readFileSync(dotGit, 'utf8'))?.[1]?.trim();
  return target === undefined ? null : path.resolve(path.dirname(dotGit), target);
}

/** A branch's commit: its loose ref, else packed-refs, in the worktree's folder or the repository's common one. */
function resolveRef(gitDir: string, ref: string): string | null {
  const commonFile = path.join(gitDir, 'commondir');
  const common = fs.existsSync(commonFile) ? path.resolve(gitDir, fs.readFileSync(commonFile, 'utf8').trim()) : gitDir;
  for (const dir of [gitDir, common]) {
    const loose = path.join(dir, ref);
    if (fs.existsSync(loose)) return fs.readFileSync(loose, 'utf8').trim();
  }
  const packed = path.join(common, 'packed-refs');
  if (!fs.existsSync(packed)) return null;
  const line = fs
    .readFileSync(packed, 'utf8')
    .split('\n')
    .find((entry) => entry.endsWith(` ${ref}`));
  return line?.split(' ')[0] ?? null;
}
