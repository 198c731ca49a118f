import { CliError, EXIT } from './exit-codes';
import { colorEnabled, type Streams } from './io';
import { TemplateError, compileTemplate, requireKnownField, trackLineParts, unknownFieldsWarning, type Template, type TrackObject } from '../domain/template';

// How data looks on stdout: JSON (one value per line, so a stream is NDJSON), a --format
// template, or a human line. Colour comes from chalk, loaded only when colour is on.

export interface Painter {
  strong(text: string): string;
  faint(text: string): string;
  good(text: string): string;
  bad(text: string): string;
}

const identity = (text: string) => text;
const plainPainter: Painter = { strong: identity, faint: identity, good: identity, bad: identity };

/** A painter for `enabled` (see io.colorEnabled); chalk is only required when it is on. */
export function createPainter(enabled: boolean): Painter {
  if (!enabled) return plainPainter;
  const chalk = require('chalk') as typeof import('chalk');
  // The caller already decided (TTY, NO_COLOR, FORCE_COLOR): do not let chalk decide again.
  const color = new chalk.Instance({ level: Math.max(chalk.level, 1) as 1 | 2 | 3 });
  return { strong: color.bold, faint: color.dim, good: color.green, bad: color.red };
}

export type TrackStyle = { kind: 'json' } | { kind: 'template'; template: Template } | { kind: 'human'; paint: Painter };

/** --json, else --format, else a human line (coloured per io.colorEnabled). */
export function chooseTrackStyle(options: { json?: boolean; format?: string }, io: Streams): TrackStyle {
  if (options.json) return { kind: 'json' };
  if (options.format !== undefined) {
    try {
      requireKnownField(options.format);
      const template = compileTemplate(options.format);
      const warning = unknownFieldsWarning(options.format);
      if (warning !== null) io.err(`svc: warning: --format: ${warning}`);
      return { kind: 'template', template };
    } catch (error) {
      if (error instanceof TemplateError) throw new CliError(`--format: ${error.message}`, EXIT.USAGE);
      throw error;
    }
  }
  return { kind: 'human', paint: createPainter(colorEnabled(io.env, io.stdoutIsTTY, false)) };
}

/** One line for one /v1/last object, in the style the user asked for. */
export function renderTrack(track: TrackObject, style: TrackStyle): string {
  switch (style.kind) {
    case 'json':
      return jsonLine(track);
    case 'template':
      return style.template(track);
    case 'human':
      return humanTrackLine(track, style.paint);
  }
}

/** `Artist - Title (Album, Year)`, leaving out what is missing. */
export function humanTrackLine(track: TrackObject, paint: Painter = plainPainter): string {
  const { head, detail } = trackLineParts(track);
  if (!head && !detail) return paint.faint(typeof track.dbid === 'number' ? `untitled #${track.dbid}` : 'untitled');
  const artist = trackLineParts({ artist: track.artist }).head;
  // Bold the artist when it leads the line; the rest stays plain, the details faint.
  const styledHead = artist && head.startsWith(artist) ? paint.strong(artist) + head.slice(artist.length) : head;
  const styledDetail = detail ? paint.faint(`(${detail})`) : '';
  return [styledHead, styledDetail].filter(Boolean).join(' ');
}

/** A JSON value on one line (JSON.stringify never emits a raw newline). */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value);
}
