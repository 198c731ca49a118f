import type { PlayKind, PlayListeners, PlayUsage } from '../domain/play';

// What a report reads: the play log's plays and the listener sessions, flattened into the rows the
// formats need (docs/reports.md "Where the rows come from"); store-source.ts makes them from the
// store's play log, the tests from fixed arrays.

export type { PlayKind, PlayListeners, PlayUsage };

/** The names a matched source (MusicBrainz) spells for a play, for the capitals check. */
export type SourceNames = Partial<Record<'artist' | 'title' | 'album' | 'label', string>>;

/** One play of the log; times are ISO 8601 UTC. */
export interface ReportPlay {
  dbid: number;
  started_at: string;
  /** null while on air. */
  ended_at: string | null;
  end_reason: string | null;
  kind: PlayKind;
  usage: PlayUsage;
  channel: string;
  artist?: string;
  title?: string;
  album?: string;
  label?: string;
  isrc?: string;
  catalogue_number?: string;
  /** The work's ISWC (`T-034.524.680-1`), when the record has one. */
  iswc?: string;
  composers?: readonly string[];
  /** The recording's own length in seconds, when known (the aired length is ended_at - started_at). */
  duration?: number;
  /** null until the play ends, or when no listener source was configured. */
  listeners: PlayListeners | null;
  /** Seconds cut from this play's end because the next one started early. */
  trimmed_seconds: number;
  source_names?: SourceNames;
}

/** One listener's connection to one channel's stream; times are ISO 8601 UTC. */
export interface ListenerSession {
  id: number;
  channel: string;
  /** The listener's address, kept only with playlog.keepAddresses; otherwise absent. */
  address?: string;
  /** The keyed hash of the address, always present. */
  address_hash: string;
  user_agent?: string;
  connected_at: string;
  /** null while connected. */
  disconnected_at: string | null;
  /** The HTTP status the listener got; 200 when the log does not say. */
  status?: number;
}
