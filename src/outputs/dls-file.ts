import { parseTemplate, renderWithSpans, trimSeparators, type TemplatePart, type TrackObject } from '../domain/template';

// The DLS file ODR-PadEnc reads (docs/outputs.md "dls: DAB+ through ODR-PadEnc"). Pure.
// A parameter block between `##### parameters { #####` and `##### parameters } #####` with
// `DL_PLUS=1`, `DL_PLUS_ITEM_TOGGLE`, `DL_PLUS_ITEM_RUNNING` and up to four
// `DL_PLUS_TAG=<content type> <start marker> <length marker>` lines (the length marker is the
// length minus one), then the label. ODR-PadEnc sends at most 128 characters of it and converts
// UTF-8 to the DAB character set itself, so places are counted in characters (code points).

export const DLS_LENGTH = 128;
const PARAMS_OPEN = '##### parameters { #####';
const PARAMS_CLOSE = '##### parameters } #####';
/** DL Plus content types ITEM.TITLE and ITEM.ARTIST. */
const DL_PLUS_TYPES: Readonly<Record<string, number>> = { title: 1, artist: 4 };

export interface DlsState {
  /** Flipped whenever a new item (track) starts. */
  itemToggle: 0 | 1;
  /** 1 while an item is on air; 0 when nothing is. */
  itemRunning: 0 | 1;
}

export function dlsTemplate(format = '{{artist}} - {{title}}'): readonly TemplatePart[] {
  return parseTemplate(format);
}

/** The file's whole text for one track (`{}` when nothing is current: no item running). */
export function dlsFile(template: readonly TemplatePart[], track: TrackObject, state: DlsState): string {
  const whole = renderWithSpans(template, track);
  const rendered = trimSeparators(whole.text, whole.spans);
  const text = [...rendered.text].slice(0, DLS_LENGTH).join('').trimEnd();
  const length = [...text].length;
  const tags = rendered.spans
    .filter((span) => DL_PLUS_TYPES[span.field] !== undefined)
    .map((span) => ({ type: DL_PLUS_TYPES[span.field] ?? 0, start: span.start, end: Math.min(span.start + span.length, length) }))
    .filter((tag) => tag.end > tag.start)
    .slice(0, 4);
  const running = text === '' ? 0 : state.itemRunning;
  return [
    PARAMS_OPEN,
    'DL_PLUS=1',
    `DL_PLUS_ITEM_TOGGLE=${state.itemToggle}`,
    `DL_PLUS_ITEM_RUNNING=${running}`,
    ...(running ? tags.map((tag) => `DL_PLUS_TAG=${tag.type} ${tag.start} ${tag.end - tag.start - 1}`) : []),
    PARAMS_CLOSE,
    text,
    '',
  ].join('\n');
}

/** The item toggle a DLS file carries (a restart keeps counting from it), else 0. */
export function itemToggleOf(file: string): 0 | 1 {
  return /^DL_PLUS_ITEM_TOGGLE=1$/m.test(file) ? 1 : 0;
}
