import type { AsciiName } from './checks';
import type { ListenerSession, PlayKind, ReportPlay } from './rows';

// One interface for every report file (docs/reports.md "How a report is made"): rows in, text out,
// one piece at a time, so that a file of any length is written without being held.

export const REPORT_FORMATS = ['soundexchange', 'npr-playlist', 'npr-streams', 'ppl', 'prs', 'bmi'] as const;
export type ReportFormatName = (typeof REPORT_FORMATS)[number];

/** The config keys a report reads (`reports.*`), resolved. */
export interface ReportSettings {
  /** NAME_OF_SERVICE; also the station id of the BMI file. */
  service: string;
  /** SoundExchange TRANSMISSION_CATEGORY. */
  category: string;
  /** IANA zone of the station's local dates and times. */
  timeZone: string;
  /** Music plays shorter than this (seconds aired) are left out and counted. */
  minSeconds: number;
  /** BMI station type: AM, FM or OT (other, e.g. internet only). */
  stationType: 'AM' | 'FM' | 'OT';
  /** BMI station format (e.g. "Jazz"), free text. */
  stationFormat: string;
  /** The SoundExchange census layout (37 CFR 370.4(e)(7) or (e)(8)) and file name pattern. */
  soundexchange: { layout: 'e8' | 'e7'; fileName: 'regulation' | '2007' };
  /** The contact rows of the (e)(7) header block. */
  contact: { name: string; street: string; city: string; phone: string; email: string };
  /**
   * The channels an audience mount feeds (docs/channels.md "No silent zeros"): a play counted 0 on
   * any other channel is a check problem, not a 0. Absent: not checked (no listener source at all).
   */
  heardChannels?: readonly string[];
  /**
   * The declared channels' report identities (docs/channels.md, `channels[].report`): a run for one
   * channel takes their non-empty values over `service`, `category` and `timeZone` (reportRun).
   */
  channelIdentities?: Readonly<Record<string, ChannelReportIdentity>>;
  /** The NPR/DS stream id of the run's channel (`channels[].report.streamId`); absent: the channel name without spaces. */
  streamId?: string;
}

/** What a declared channel's report rows say; an empty value leaves the `reports.*` value. */
export interface ChannelReportIdentity {
  service: string;
  category: string;
  streamId: string;
  timeZone: string;
}

/** The station's local dates `from` and `to`, both included, and the instants they span. */
export interface ReportRange {
  from: string;
  to: string;
  /** First instant of `from` (ms, UTC). */
  startMs: number;
  /** First instant after `to` (ms, UTC). */
  endMs: number;
}

/** What the check pass learnt about the plays, for formats that must know before the first line. */
export interface ReportFacts {
  musicPlays: number;
  /** Plays left out because they are not music, by kind. */
  excludedKinds: Partial<Record<PlayKind, number>>;
  /** Music plays left out as shorter than reports.minSeconds. */
  excludedShort: number;
  /** The channels of the reported plays, sorted. */
  channels: string[];
  /** Some reported play has trimmed seconds (kept or made by the report). */
  anyTrimmed: boolean;
  /** What blocks the file. */
  problems: number;
  /** What is named but blocks nothing (cells written neutralised). */
  notes: number;
  /** npr-streams: the listener sessions the streaming log lists (it lists no plays). */
  sessions?: number;
}

export interface ReportRun {
  format: ReportFormatName;
  settings: ReportSettings;
  range: ReportRange;
  channel?: string;
  /** soundexchange: `csv` for the 11-column file. */
  variant?: string;
  /** ppl: the local date whose programme report rows to write instead of the summary. */
  programmeDate?: string;
  /** The clock of the run (BMI writes its creation time; open sessions end here). */
  nowMs: number;
}

/**
 * Rows in batches of a few hundred: one await per batch rather than per row keeps a month's
 * report fast and its garbage small (docs/reports.md "Memory and speed").
 */
export type Batches<T> = AsyncIterable<readonly T[]>;

/** A recording's census line: its names and its plays' counts summed. */
export interface RecordingLine {
  artist?: string;
  title?: string;
  isrc?: string;
  album?: string;
  label?: string;
  channel: string;
  performances: number;
  listenerSeconds: number;
  plays: number;
}

/** The rows of one run: reported plays in air order (music, long enough, listeners filled) and sessions. */
export interface ReportInput {
  plays(): Batches<ReportPlay>;
  /** Every play of the range, every kind, in air order (what was on air: PPL's hours). */
  airPlays(): Batches<ReportPlay>;
  sessions(): Batches<ListenerSession>;
  /**
   * The census lines summed where the plays are stored (by channel too when asked), or undefined:
   * then the format sums plays() itself.
   */
  recordings?(byChannel: boolean): Promise<Iterable<RecordingLine> | undefined>;
}

export interface ReportFormat {
  readonly name: ReportFormatName;
  /** The Content-Type of the file (text, CSV). */
  contentType(run: ReportRun): string;
  /** Listener counts per play are needed (a play without any is a problem). */
  needsPerformances(run: ReportRun): boolean;
  /**
   * The file reads the plays once, every one before its first line after the header, and neither
   * its lines nor its name depend on the facts: one pass can check and write it, holding only its
   * lines (run-report.ts prepareReport).
   */
  gathersBeforeWriting(run: ReportRun): boolean;
  /** The names the file writes in ASCII, transliterated (docs/reports.md "Names in the files"); none for a UTF-8 file. */
  readonly asciiNames: readonly AsciiName[];
  /** The file name the society asks for. */
  fileName(run: ReportRun, facts: ReportFacts): string;
  /** The file, piece by piece; each piece is one or more whole lines. */
  render(input: ReportInput, run: ReportRun, facts: ReportFacts): AsyncIterable<string>;
}

/** YYYYMMDD of a local date. */
export const compactDate = (date: string): string => date.replaceAll('-', '');

/** A name that is safe as a file name on every system: no separators, quotes or controls. */
export function fileSafe(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\\/:*?"<>|\u0000-\u001f\s]+/g, '_');
}
