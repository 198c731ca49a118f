import { compileTemplate, oneLine, type Template } from '../domain/template';
import type { TrackData } from './output';

// The text a stream title output sets (docs/outputs.md "icecast and shoutcast"): `format` in the
// one template language (domain/template.ts: `{{field}}` or `{field}`), default
// `{{artist}} - {{title}}`. A separator left dangling at either end by a missing field goes, so a
// track without an artist shows its title.

const DEFAULT_TITLE_FORMAT = '{{artist}} - {{title}}';
/** What one updinfo carries at most; players show far less. */
const MAX_TITLE_LENGTH = 1000;

/** Compiled once, when the output is built: a broken format fails the start, not every track. */
export function streamTitleTemplate(format: string = DEFAULT_TITLE_FORMAT): (data: TrackData) => string {
  const template: Template = compileTemplate(format);
  // A stream title is one line on every listener's player.
  return (data) =>
    oneLine(template(data))
      .replace(/^(\s*[-–—|·:]\s*)+/, '')
      .replace(/(\s*[-–—|·:]\s*)+$/, '')
      .trim()
      .slice(0, MAX_TITLE_LENGTH);
}
