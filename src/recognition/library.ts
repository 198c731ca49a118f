import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { errorMessage } from '../errors';
import type { LibraryEntry, LibraryStore } from '../store/library';
import { decodeFile, fingerprintPcm, readTags, SAMPLE_RATE, type AudioTools } from './audio-tools';

// Adding to the recognition library (docs/recognition.md "The library"): folders (recursively),
// M3U playlists and single files become a list of audio files; each new or changed file is
// decoded, fingerprinted whole and stored with its tags; an unchanged one (same size and
// modification time) is not read again; one that cannot be read is reported and skipped.

/** The names taken from a folder; a playlist or a file named directly is taken whatever its name. */
const AUDIO_EXTENSIONS = new Set(['.mp3', '.ogg', '.oga', '.opus', '.flac', '.wav', '.m4a', '.aac', '.mp4', '.wma', '.aif', '.aiff', '.mka', '.webm']);
const PLAYLIST_EXTENSIONS = new Set(['.m3u', '.m3u8']);
/** Files one add may name: a bound on the list the server holds. */
export const MAX_FILES_PER_ADD = 100_000;

export interface AddProblem {
  path: string;
  error: string;
}

export type AddEvent =
  { type: 'progress'; done: number; total: number; path: string; outcome: 'added' | 'unchanged' | 'failed' } | { type: 'problem'; problem: AddProblem };

export interface AddSummary {
  added: number;
  unchanged: number;
  failed: AddProblem[];
  /** Library size after the add. */
  tracks: number;
}

export interface LibraryDeps {
  store: LibraryStore;
  tools: AudioTools;
  /** Told after the library changed (the matcher rebuilds its index). */
  changed?: () => void;
}

/** The audio files the inputs name, absolute and without repeats, plus the inputs that could not be read. */
export async function expandInputs(inputs: readonly string[]): Promise<{ files: string[]; problems: AddProblem[] }> {
  const files = new Set<string>();
  const problems: AddProblem[] = [];
  const walk = async (folder: string, depth: number): Promise<void> => {
    if (depth > 32 || files.size >= MAX_FILES_PER_ADD) return;
    const entries = await readdir(folder, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) await walk(full, depth + 1);
      else if (entry.isFile() && AUDIO_EXTENSIONS.has(path.extname(entry.name).toLowerCase()) && files.size < MAX_FILES_PER_ADD) files.add(full);
    }
  };
  for (const input of inputs) {
    const absolute = path.resolve(input);
    try {
      const info = await stat(absolute);
      if (info.isDirectory()) await walk(absolute, 0);
      else if (PLAYLIST_EXTENSIONS.has(path.extname(absolute).toLowerCase())) {
        for (const entry of playlistEntries(await readFile(absolute, 'utf8'), path.dirname(absolute))) if (files.size < MAX_FILES_PER_ADD) files.add(entry);
      } else files.add(absolute);
    } catch (error) {
      problems.push({ path: absolute, error: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or folder' : errorMessage(error) });
    }
  }
  return { files: [...files], problems };
}

/** The local files an M3U playlist names, relative entries against its folder; URLs and comments are skipped. */
export function playlistEntries(text: string, folder: string): string[] {
  return text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#') && !/^[a-z][a-z0-9+.-]*:\/\//i.test(line))
    .map((line) => path.resolve(folder, line.startsWith('file://') ? decodeURIComponent(line.slice('file://'.length)) : line));
}

/** Adds the files the inputs name; `onEvent` hears every file's outcome (what the progress line shows). */
export async function addToLibrary(deps: LibraryDeps, inputs: readonly string[], onEvent: (event: AddEvent) => void = () => undefined): Promise<AddSummary> {
  const { files, problems } = await expandInputs(inputs);
  for (const problem of problems) onEvent({ type: 'problem', problem });
  const stamps = await deps.store.stamps();
  const summary: AddSummary = { added: 0, unchanged: 0, failed: [...problems], tracks: 0 };
  let done = 0;
  for (const file of files) {
    let outcome: 'added' | 'unchanged' | 'failed';
    try {
      outcome = await addFile(deps, file, stamps.get(file));
    } catch (error) {
      const problem = { path: file, error: errorMessage(error) };
      summary.failed.push(problem);
      onEvent({ type: 'problem', problem });
      outcome = 'failed';
    }
    if (outcome === 'added') summary.added += 1;
    if (outcome === 'unchanged') summary.unchanged += 1;
    done += 1;
    onEvent({ type: 'progress', done, total: files.length, path: file, outcome });
  }
  if (summary.added > 0) deps.changed?.();
  summary.tracks = await deps.store.count();
  return summary;
}

async function addFile(deps: LibraryDeps, file: string, stamp: { size: number; mtimeMs: number } | undefined): Promise<'added' | 'unchanged'> {
  const info = await stat(file);
  const mtimeMs = Math.trunc(info.mtimeMs);
  if (stamp && stamp.size === info.size && stamp.mtimeMs === mtimeMs) return 'unchanged';
  const pcm = await decodeFile(deps.tools, file);
  const fingerprint = await fingerprintPcm(deps.tools, pcm);
  const tags = await readTags(deps.tools, file);
  if (tags.title === undefined) tags.title = path.basename(file, path.extname(file));
  await deps.store.put({ path: file, size: info.size, mtimeMs, durationSeconds: pcm.length / 2 / SAMPLE_RATE, tags, fingerprint });
  return 'added';
}

export async function removeFromLibrary(deps: LibraryDeps, selector: { id: number } | { path: string }): Promise<number[]> {
  const removed = await deps.store.remove('path' in selector ? { path: path.resolve(selector.path) } : selector);
  if (removed.length > 0) deps.changed?.();
  return removed;
}

export function listLibrary(deps: Pick<LibraryDeps, 'store'>): Promise<LibraryEntry[]> {
  return deps.store.list();
}
