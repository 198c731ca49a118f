import type { Logger } from '../log';
import { secretMatches } from '../pipeline/authenticate';
import { adminPassword, basicPassword } from '../pipeline/icecast-credentials';
import {
  adminHtml,
  adminXml,
  authenticationRequired,
  badRequest,
  decodeText,
  queryBytes,
  normalizeMount,
  serviceUnavailable,
  splitSong,
  tooManyAttempts,
  type RequestHead,
} from './source-protocol';
import { describeFailure, describeTrack, type SubmitFields } from './submitter';

// Title updates from software that streams MP3 or AAC (no tags in the stream): Icecast's
// `GET /admin/metadata?mode=updinfo` (xiph/Icecast-Server src/admin.c, command_metadata) and
// SHOUTcast v1's `GET /admin.cgi?mode=updinfo&pass=…` (Icecast's command_shoutcast_metadata).
// Each is an ordinary submission; the answer is sent once it is stored (or refused).

/**
 * Checks a given password at one door for one address; 'accepted', 'refused', or the seconds the
 * address must wait before trying again (listener.ts, throttled per address).
 */
export type PasswordCheck = (given: string | null | undefined, from: string, door: string) => Promise<'accepted' | 'refused' | number>;

export interface TitleUpdateDeps {
  checkPassword: PasswordCheck;
  submit: SubmitFields;
  logger: Logger;
}

export type TitleUpdateKind = 'icecast' | 'shoutcast';

/** The whole answer to one title update, as the bytes to write. */
export async function answerTitleUpdate(kind: TitleUpdateKind, head: RequestHead, from: string, deps: TitleUpdateDeps): Promise<string> {
  const params = queryBytes(head.query);
  const given = kind === 'shoutcast' ? adminPassword(params.get('pass'), head.headers.get('authorization')) : basicPassword(head.headers.get('authorization'));
  const verdict = await deps.checkPassword(given, from, kind === 'shoutcast' ? 'admin.cgi' : 'admin/metadata');
  if (typeof verdict === 'number') return tooManyAttempts(verdict);
  if (verdict === 'refused') return authenticationRequired();
  const mode = params.get('mode')?.toString('utf8');
  if (mode !== 'updinfo') return kind === 'icecast' ? adminXml('No such action', false) : badRequest('No such action');
  const fields = titleFields(params);
  if (fields === 'bad-charset') return badRequest('Unsupported charset');
  if (!fields) return badRequest('Missing parameter');
  const mountText = params.get('mount')?.toString('utf8');
  const mount = mountText === undefined ? null : (normalizeMount(mountText) ?? '(an invalid mount)');
  const what = `title update${mount ? ` for ${mount}` : ''} from ${from} ${describeTrack(fields)}`;
  try {
    // A title for a mount is a play on the channel of that mount (docs/play-log.md "Channels").
    const result = await deps.submit(mount && mount.startsWith('/') ? { ...fields, channel: mount } : fields);
    deps.logger.info(`icecast listener: ${what} stored as dbid ${result.dbid}`);
    return kind === 'icecast' ? adminXml('Metadata update successful', true) : adminHtml('Metadata update successful');
  } catch (error) {
    const { status, message } = describeFailure(error);
    deps.logger.warn(`icecast listener: ${what} not stored (${status} ${message})`);
    return status < 500 ? badRequest(message) : serviceUnavailable(message);
  }
}

/** An empty configured password means no password is asked (as for the HTTP API). */
export function passwordAccepted(given: string | null | undefined, expected: string): boolean {
  if (expected === '') return true;
  return typeof given === 'string' && secretMatches(Buffer.from(given, 'utf8'), Buffer.from(expected, 'utf8'));
}

/** `artist=` and `title=` when given, else `song=` split at the first " - ". */
function titleFields(params: ReadonlyMap<string, Buffer>): Record<string, string> | 'bad-charset' | null {
  const charset = params.get('charset')?.toString('latin1');
  const decoded = new Map<string, string>();
  for (const name of ['artist', 'title', 'song']) {
    const bytes = params.get(name);
    if (bytes === undefined) continue;
    const text = decodeText(bytes, charset);
    if (text === null) return 'bad-charset';
    if (text.trim() !== '') decoded.set(name, text.trim());
  }
  const fields: Record<string, string> = {};
  const [artist, title, song] = [decoded.get('artist'), decoded.get('title'), decoded.get('song')];
  if (artist !== undefined || title !== undefined) {
    if (artist !== undefined) fields.artist = artist;
    if (title !== undefined) fields.title = title;
    return fields;
  }
  if (song === undefined) return null;
  const split = splitSong(song);
  if (split.artist?.trim()) fields.artist = split.artist.trim();
  if (split.title.trim()) fields.title = split.title.trim();
  return Object.keys(fields).length > 0 ? fields : null;
}
