import type { Match } from './fingerprint-index';

// What one stream's windows of matches make of its title (docs/recognition.md "Matching"):
// a title after two windows that agree (the same track, its offset moved on by about the audio
// between them), cleared after `clearAfter` windows without it. A window that matches another
// track counts as one without the title; that track needs two agreeing windows of its own.
// Pure: the caller says where in the stream each window lies.

export interface TrackerOptions {
  /** Windows without the title before it is cleared. */
  clearAfter: number;
  /** Items an agreeing offset may be off by, plus this share of the items between the windows (vinyl drifts). */
  slackItems: number;
  slackShare: number;
}

export const DEFAULT_TRACKER: TrackerOptions = { clearAfter: 4, slackItems: 6, slackShare: 0.1 };

export type TitleEvent = { type: 'title'; match: Match; rate: number } | { type: 'cleared'; trackId: number };

export interface WindowResult {
  /** The stream position of the window's first item, in items. */
  position: number;
  match: Match | null;
  /** The playback rate the match was found at (1: as recorded). */
  rate?: number;
}

interface Seen {
  match: Match;
  position: number;
  rate: number;
}

export class TitleTracker {
  private title: Seen | null = null;
  private candidate: Seen | null = null;
  private misses = 0;

  constructor(private readonly options: TrackerOptions = DEFAULT_TRACKER) {}

  /** The title now shown, if any. */
  current(): Match | null {
    return this.title?.match ?? null;
  }

  /** One window's result; answers the change it makes, if any. */
  push(window: WindowResult): TitleEvent | null {
    const seen = window.match ? { match: window.match, position: window.position, rate: window.rate ?? 1 } : null;
    if (seen && this.title && this.agrees(this.title, seen)) {
      this.title = seen;
      this.misses = 0;
      this.candidate = null;
      return null;
    }
    let event: TitleEvent | null = null;
    if (seen && this.candidate && this.agrees(this.candidate, seen)) {
      // The title's own track found again at another place (a part that repeats) is no new title.
      const same = this.title?.match.trackId === seen.match.trackId;
      this.title = seen;
      this.candidate = null;
      this.misses = 0;
      return same ? null : { type: 'title', match: seen.match, rate: seen.rate };
    }
    this.candidate = seen;
    if (this.title) {
      this.misses += 1;
      if (this.misses >= this.options.clearAfter) {
        event = { type: 'cleared', trackId: this.title.match.trackId };
        this.title = null;
        this.misses = 0;
      }
    }
    return event;
  }

  private agrees(earlier: Seen, later: Seen): boolean {
    if (earlier.match.trackId !== later.match.trackId) return false;
    const streamMoved = later.position - earlier.position;
    const trackMoved = later.match.offset - earlier.match.offset;
    const expected = streamMoved * later.rate;
    return Math.abs(trackMoved - expected) <= this.options.slackItems + this.options.slackShare * Math.abs(streamMoved);
  }
}
