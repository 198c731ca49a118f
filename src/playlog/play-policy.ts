import type { PlayKind } from '../domain/play';

// How the play log takes a submission's play (docs/play-log.md): the `playlog` keys that decide
// its start and its kind. A fact of the config, read by the submission and the play log alike.

export interface KindRule {
  /** Field name -> regular expression (case-insensitive); all must match. */
  readonly match: Readonly<Record<string, string>>;
  readonly kind: PlayKind;
}

export interface PlayPolicy {
  readonly startedAtPastSeconds: number;
  readonly startedAtFutureSeconds: number;
  readonly kindRules: readonly KindRule[];
  /** A play with a duration below this many seconds is not music (0: off). */
  readonly shortItemSeconds: number;
  readonly shortItemKind: PlayKind;
}

export const DEFAULT_PLAY_POLICY: PlayPolicy = {
  startedAtPastSeconds: 600,
  startedAtFutureSeconds: 5,
  kindRules: [],
  shortItemSeconds: 0,
  shortItemKind: 'jingle',
};
