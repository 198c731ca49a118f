import type { EndReason } from '../domain/play';
import type { TrackRecord } from '../domain/track';
import type { PlayPolicy } from './play-policy';

// The one port the record use cases (src/pipeline/) have on the play log (docs/architecture.md
// "A submission's path"): how a play is taken (`policy`), that one was stored (`started`), that a
// channel's play ended (`end`), and the performance complement's warnings for a record
// (`complement`). `PlayLog` (play-log.ts) implements it; nothing in the play log calls back.

export interface PlayLogPort {
  readonly policy: PlayPolicy;
  /** A play was stored: the one before it on its channel may have ended. */
  started(): void;
  /** Ends the channel's play on air; the ended play's dbid, or null when none was on air. */
  end(channel: string, reason: EndReason): Promise<number | null>;
  /** The performance complement's warnings for a stored record (none with `playlog.complement` off). */
  complement(record: TrackRecord): Promise<string[]>;
}
