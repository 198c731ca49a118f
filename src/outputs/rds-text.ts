import { parseTemplate, renderWithSpans, trimSeparators, type FieldSpan, type TemplatePart, type TrackObject } from '../domain/template';

// The text an RDS encoder is sent (docs/outputs.md "rds: an FM station's RDS encoder"). Pure.
// Encoders take ASCII commands, one per line: `TEXT=` (RadioText, 64 characters), `DPS=`
// (dynamic PS, scrolled by the encoder 8 characters at a time) and `RTP=` (RadioText Plus:
// two tags of content type, start and length marker, two digits each). Letters with accents
// lose them (é to e), a few letters become their usual spelling (ß to ss, Æ to AE), and what is
// left outside printable ASCII is dropped, so a tag's place is counted on the text as sent.

export const RADIOTEXT_LENGTH = 64;
/** The characters of one PS frame; a longer DPS text is scrolled by the encoder. */
export const PS_SEGMENT_LENGTH = 8;
/** Encoders take a dynamic PS text of up to 128 characters. */
export const DPS_LENGTH = 128;
/** RT+ content types (ITEM.TITLE, ITEM.ARTIST). */
const RT_PLUS_TYPES: Readonly<Record<string, number>> = { title: 1, artist: 4 };

const SPELLED: Readonly<Record<string, string>> = {
  ß: 'ss',
  Æ: 'AE',
  æ: 'ae',
  Œ: 'OE',
  œ: 'oe',
  Ø: 'O',
  ø: 'o',
  Ł: 'L',
  ł: 'l',
  Đ: 'D',
  đ: 'd',
  Þ: 'Th',
  þ: 'th',
  '’': "'",
  '‘': "'",
  '“': '"',
  '”': '"',
  '–': '-',
  '—': '-',
  '…': '...',
};

/** One character as the encoder's ASCII takes it ('' when it has no spelling there). */
function asciiOf(char: string): string {
  const spelled = SPELLED[char];
  if (spelled !== undefined) return spelled;
  const bare = char.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
  return /^[\x20-\x7e]*$/.test(bare) ? bare : '';
}

/** `text` in the encoder's ASCII, with each span moved to where its characters went. */
export function toRdsAscii(text: string, spans: readonly FieldSpan[] = []): { text: string; spans: FieldSpan[] } {
  const chars = [...text];
  const offsets: number[] = [];
  let out = '';
  for (const char of chars) {
    offsets.push(out.length);
    out += asciiOf(char);
  }
  offsets.push(out.length);
  const moved = spans.map((span) => {
    const start = offsets[Math.min(span.start, chars.length)] ?? out.length;
    const end = offsets[Math.min(span.start + span.length, chars.length)] ?? out.length;
    return { field: span.field, start, length: end - start };
  });
  return { text: out, spans: moved.filter((span) => span.length > 0) };
}

/** A line's text cut to `length` characters, spans cut with it. */
export function cutTo(text: string, spans: readonly FieldSpan[], length: number): { text: string; spans: FieldSpan[] } {
  const cut = text.length > length ? text.slice(0, length).trimEnd() : text;
  const kept = spans.filter((span) => span.start < cut.length).map((span) => ({ ...span, length: Math.min(span.length, cut.length - span.start) }));
  return { text: cut, spans: kept };
}

/**
 * `RTP=` values: tag 1 then tag 2, each content type, start marker (0-63) and length marker
 * (the length minus one; 0-63 for tag 1, 0-31 for tag 2). A tag that does not fit is 00,00,00.
 */
export function rtPlusValue(spans: readonly FieldSpan[]): string {
  const tagged = spans.filter((span) => RT_PLUS_TYPES[span.field] !== undefined).slice(0, 2);
  // Tag 2 is shorter: the longer of the two goes first when only that order fits both.
  const orders = [tagged, [...tagged].reverse()].map((order) => [0, 1].map((index) => tagOf(order[index], index)));
  const fitting = (tags: number[][]) => tags.filter((tag) => tag[0] !== 0).length;
  const best = orders.reduce((chosen, order) => (fitting(order) > fitting(chosen) ? order : chosen));
  return best
    .flat()
    .map((value) => String(value).padStart(2, '0'))
    .join(',');
}

function tagOf(span: FieldSpan | undefined, index: number): number[] {
  const maxLength = index === 0 ? 64 : 32;
  if (!span || span.start > 63 || span.length > maxLength) return [0, 0, 0];
  return [RT_PLUS_TYPES[span.field] ?? 0, span.start, span.length - 1];
}

export interface RdsLinesTemplate {
  radioText: readonly TemplatePart[];
  ps?: readonly TemplatePart[];
  rtPlus: boolean;
}

export function rdsLinesTemplate(format: string, ps: string | undefined, rtPlus: boolean): RdsLinesTemplate {
  return { radioText: parseTemplate(format), ...(ps === undefined ? {} : { ps: parseTemplate(ps) }), rtPlus };
}

/** The command lines for one track, without line ends: `TEXT=`, then `RTP=` and `DPS=` when configured. */
export function rdsLines(template: RdsLinesTemplate, track: TrackObject): string[] {
  const rendered = renderWithSpans(template.radioText, track);
  // Trimmed again once in ASCII: a name with no ASCII spelling (東京) leaves its separator behind,
  // and `TEXT= - ` is no RadioText (docs/outputs.md); with nothing left, TEXT= is sent empty.
  const trimmed = trimSeparators(rendered.text, rendered.spans);
  const converted = toRdsAscii(trimmed.text, trimmed.spans);
  const ascii = trimSeparators(converted.text, converted.spans);
  const radioText = cutTo(ascii.text, ascii.spans, RADIOTEXT_LENGTH);
  const lines = [`TEXT=${radioText.text}`];
  if (template.rtPlus) lines.push(`RTP=${rtPlusValue(radioText.spans)}`);
  if (template.ps) {
    const ps = renderWithSpans(template.ps, track);
    const text = cutTo(trimSeparators(toRdsAscii(trimSeparators(ps.text, []).text).text, []).text, [], DPS_LENGTH).text;
    if (text) lines.push(`DPS=${text}`);
  }
  return lines;
}
