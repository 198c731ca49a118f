import { compactDate, fileSafe, type RecordingLine, type ReportFormat, type ReportInput, type ReportRun } from '../format';
import type { ReportPlay } from '../rows';
import { WRITTEN_FIELDS, recordingKey, writtenName } from '../../domain/recording';
import { caretField, csvField } from '../text-fields';

// SoundExchange Report of Use (docs/reports-us.md "SoundExchange"): one row per recording with its
// performances summed. The census file is caret-and-pipe text; `--variant csv` is the 11-column
// CSV that adds aggregate tuning hours, the channel and the play frequency for sample reporting.

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
  const { artist, title, isrc, album, label, performances } = recording;
  return `${prefix}${caretField(artist)}|${caretField(title)}|${caretField(isrc)}|${caretField(album)}|${caretField(label)}|${performances}\n`;
}

function csvLine(run: ReportRun, recording: RecordingLine): string {
  const hours = (recording.listenerSeconds / 3600).toFixed(2);
  const fields = [
    run.settings.service,
    run.settings.category,
    recording.artist,
    recording.title,
    recording.isrc,
    recording.album,
    recording.label,
    recording.performances,
    hours,
    recording.channel,
    recording.plays,
  ];
  return `${fields.map(csvField).join(',')}\r\n`;
}

async function* render(input: ReportInput, run: ReportRun): AsyncGenerator<string> {
  const csv = run.variant === 'csv';
  yield csv ? `${CSV_COLUMNS.join(',')}\r\n` : `${CENSUS_COLUMNS.map(caretField).join('|')}\n`;
  const prefix = `${caretField(run.settings.service)}|${caretField(run.settings.category)}|`;
  let lines: string[] = [];
  for (const recording of await recordings(input, csv)) {
    lines.push(csv ? csvLine(run, recording) : censusLine(prefix, recording));
    if (lines.length === 256) {
      yield lines.join('');
      lines = [];
    }
  }
  if (lines.length > 0) yield lines.join('');
}

export const soundexchange: ReportFormat = {
  name: 'soundexchange',
  contentType: (run) => (run.variant === 'csv' ? 'text/csv; charset=utf-8' : 'text/plain; charset=utf-8'),
  needsPerformances: () => true,
  gathersBeforeWriting: () => true,
  fileName(run) {
    const extension = run.variant === 'csv' ? 'csv' : 'txt';
    return fileSafe(`${run.settings.service}${compactDate(run.range.from)}_${compactDate(run.range.to)}_${run.settings.category}.${extension}`);
  },
  render,
};
