import { compactDate, fileSafe, type RecordingLine, type ReportFormat, type ReportInput, type ReportRun } from '../format';
import { localParts, pad2, pad4 } from '../local-time';
import type { ReportPlay } from '../rows';
import { WRITTEN_FIELDS, recordingKey, validIsrc, writtenName } from '../../domain/recording';
import { asciiSpelling, caretField, csvField } from '../text-fields';
import { secondsInside } from './ppl';

// SoundExchange Report of Use (docs/reports-us.md "SoundExchange"): one row per recording with its
// performances summed. The census file is 37 CFR 370.4(e)(8) (no header or footer) or (e)(7) (the
// 14-row header block), ASCII, `^` text and `|` between fields, each line ended by a carriage
// return; `--variant csv` is the 11-column CSV that adds the channel's aggregate tuning hours,
// the channel and the play frequency for sample reporting.

const EOL = '\r\n';

const CENSUS_COLUMNS = [
  'NAME_OF_SERVICE',
  'TRANSMISSION_CATEGORY',
  'FEATURED_ARTIST',
  'SOUND_RECORDING_TITLE',
  'ISRC',
  'ALBUM_TITLE',
  'MARKETING_LABEL',
  'ACTUAL_TOTAL_PERFORMANCES',
];
const CSV_COLUMNS = [...CENSUS_COLUMNS, 'AGGREGATE_TUNING_HOURS', 'CHANNEL_OR_PROGRAM_NAME', 'PLAY_FREQUENCY'];

/**
 * The recordings of the run in order of first play: summed by the store when it can, else here.
 * Memory grows with the distinct recordings (per channel for the CSV), never with the plays or
 * the sessions.
 */
async function recordings(input: ReportInput, byChannel: boolean): Promise<Iterable<RecordingLine>> {
  const stored = await input.recordings?.(byChannel);
  if (stored !== undefined) return stored;
  const found = new Map<string, RecordingLine>();
  for await (const batch of input.plays()) for (const play of batch) add(found, play, byChannel);
  return found.values();
}

function add(found: Map<string, RecordingLine>, play: ReportPlay, byChannel: boolean): void {
  const key = byChannel ? `${play.channel}\u0000${recordingKey(play)}` : recordingKey(play);
  let recording = found.get(key);
  if (!recording) {
    // Every field written out, not spread: V8 gives a spread-built object a slow shape, and a
    // month's plays each add to one (docs/reports.md "Memory and speed").
    recording = {
      artist: writtenName(play, 'artist'),
      title: writtenName(play, 'title'),
      isrc: writtenName(play, 'isrc'),
      album: writtenName(play, 'album'),
      label: writtenName(play, 'label'),
      channel: play.channel,
      performances: 0,
      listenerSeconds: 0,
      plays: 0,
    };
    found.set(key, recording);
  }
  fillNames(recording, play);
  recording.performances += play.listeners?.atp ?? 0;
  recording.listenerSeconds += play.listeners?.listener_seconds ?? 0;
  recording.plays++;
}

/** A later play of the same ISRC may know the album or label an earlier one lacked (the store fills them the same way). */
function fillNames(recording: RecordingLine, play: ReportPlay): void {
  if (recording.artist && recording.title && recording.isrc && recording.album && recording.label) return;
  for (const field of WRITTEN_FIELDS) recording[field] ??= writtenName(play, field);
}

/** The census line of a recording after `prefix`, the service and category fields every line starts with. */
function censusLine(prefix: string, recording: RecordingLine): string {
  const { artist, title, album, label, performances } = recording;
  // An ISRC is written only when it is one (docs/reports-us.md "SoundExchange").
  const isrc = validIsrc(recording.isrc);
  return `${prefix}${caretField(artist)}|${caretField(title)}|${caretField(isrc)}|${caretField(album)}|${caretField(label)}|${performances}${EOL}`;
}

/** The rule's aggregate tuning hours of each channel: every listener's hours of the period. */
async function tuningHours(input: ReportInput, run: ReportRun): Promise<Map<string, number>> {
  const seconds = new Map<string, number>();
  for await (const batch of input.sessions())
    for (const session of batch)
      seconds.set(session.channel, (seconds.get(session.channel) ?? 0) + secondsInside(session, run.range.startMs, run.range.endMs, run.nowMs));
  return new Map([...seconds].map(([channel, total]) => [channel, total / 3600]));
}

function csvLine(run: ReportRun, recording: RecordingLine, hoursOf: Map<string, number>): string {
  const hours = (hoursOf.get(recording.channel) ?? 0).toFixed(2);
  const fields = [
    run.settings.service,
    run.settings.category,
    recording.artist,
    recording.title,
    validIsrc(recording.isrc),
    recording.album,
    recording.label,
    recording.performances,
    hours,
    recording.channel,
    recording.plays,
  ];
  return `${fields.map((field) => csvField(typeof field === 'string' ? asciiSpelling(field).text : field)).join(',')}\r\n`;
}

/** YYYYMMDD of an instant in the station's zone. */
function localDate(ms: number, timeZone: string): string {
  const p = localParts(ms, timeZone);
  return `${pad4(p.year)}${pad2(p.month)}${pad2(p.day)}`;
}

/**
 * 37 CFR 370.4(e)(7): rows 1-13 (service, contact, street, city/state/zip, phone, e-mail, first
 * and last date, generation date, data rows, text indicator, delimiter, a blank row), then the
 * field names on row 14; the data starts on row 15.
 */
export function headerBlock(run: ReportRun, rows: number): string {
  const { settings } = run;
  const { contact } = settings;
  const lines = [
    settings.service,
    contact.name,
    contact.street,
    contact.city,
    contact.phone,
    contact.email,
    compactDate(run.range.from),
    compactDate(run.range.to),
    localDate(run.nowMs, settings.timeZone),
    String(rows),
    '^',
    '|',
    '',
    CENSUS_COLUMNS.map(caretField).join('|'),
  ];
  return lines.map((line) => `${line === '^' || line === '|' ? line : line.replace(/[\r\n]/g, ' ')}${EOL}`).join('');
}

async function* render(input: ReportInput, run: ReportRun): AsyncGenerator<string> {
  const csv = run.variant === 'csv';
  const prefix = `${caretField(run.settings.service)}|${caretField(run.settings.category)}|`;
  const hoursOf = csv ? await tuningHours(input, run) : new Map<string, number>();
  const all = await recordings(input, csv);
  if (csv) yield `${CSV_COLUMNS.join(',')}\r\n`;
  // (e)(7) counts the data rows before the first: the census holds one line per recording anyway.
  const lines = [...all].map((recording) => (csv ? csvLine(run, recording, hoursOf) : censusLine(prefix, recording)));
  if (!csv && run.settings.soundexchange.layout === 'e7') yield headerBlock(run, lines.length);
  for (let i = 0; i < lines.length; i += 256) yield lines.slice(i, i + 256).join('');
}

/**
 * 37 CFR 370.4(e)(5): the service's name and the period, `Name20050101-20050331.txt`; with
 * `reports.soundexchange.fileName: "2007"` the older delivery pattern `Name20050101_20050331_A.txt`.
 * A one-channel file carries the channel after the name.
 */
function fileName(run: ReportRun): string {
  const extension = run.variant === 'csv' ? 'csv' : 'txt';
  const name = run.channel === undefined ? run.settings.service : `${run.settings.service}-${run.channel}`;
  const [from, to] = [compactDate(run.range.from), compactDate(run.range.to)];
  if (run.settings.soundexchange.fileName === '2007') return fileSafe(`${name}${from}_${to}_${run.settings.category}.${extension}`);
  return fileSafe(`${name}${from}-${to}.${extension}`);
}

export const soundexchange: ReportFormat = {
  name: 'soundexchange',
  contentType: (run) => (run.variant === 'csv' ? 'text/csv; charset=us-ascii' : 'text/plain; charset=us-ascii'),
  needsPerformances: () => true,
  gathersBeforeWriting: () => true,
  asciiNames: ['artist', 'title', 'album', 'label'],
  fileName,
  render,
};
