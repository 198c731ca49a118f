import { textField, type TrackData } from './output';

// The text a stream title output sets (docs/outputs.md "icecast and shoutcast"): `format` with
// `{{field}}` placeholders, default `{{artist}} - {{title}}`. A missing field renders empty and
// a separator left dangling at either end goes, so a track without an artist shows its title.
// (Only `{{field}}`: the shared template language of domain/template.ts was not on main yet.)

export const DEFAULT_TITLE_FORMAT = '{{artist}} - {{title}}';
/** What one updinfo carries at most; players show far less. */
const MAX_TITLE_LENGTH = 1000;

export function streamTitle(data: TrackData, format: string = DEFAULT_TITLE_FORMAT): string {
  const text = format.replace(/\{\{\s*([^{}\s]+)\s*\}\}/g, (_, field: string) => textField(data, field).replace(/[\r\n]+/g, ' '));
  return text
    .replace(/^(\s*[-–—|·:]\s*)+/, '')
    .replace(/(\s*[-–—|·:]\s*)+$/, '')
    .trim()
    .slice(0, MAX_TITLE_LENGTH);
}
