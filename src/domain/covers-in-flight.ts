// The records whose cover is still being looked for (docs/decisions.md "Complete frames"): an
// image client that asks for a cover meanwhile waits for it instead of hearing `no_image`. A
// flight with the album '' is the search for a record's artist images (lookup and downloads). The
// pipeline registers a record when it is announced without a cover and lets go once the cover is
// linked or enrichment has ended; the image socket waits on the flights whose names match. State,
// no I/O; bounded by the submissions under way.

export interface CoverFlight {
  artist: string;
  album: string;
  /** Settles when the cover is linked or the search has ended (found or not). */
  done: Promise<void>;
}

export class CoversInFlight {
  private readonly flights = new Set<CoverFlight>();

  /** Registers a search; the answer ends it (safe to call more than once). */
  start(artist: string, album: string): () => void {
    let finish: () => void = () => undefined;
    const flight: CoverFlight = { artist, album, done: new Promise<void>((resolve) => (finish = resolve)) };
    this.flights.add(flight);
    return () => {
      this.flights.delete(flight);
      finish();
    };
  }

  /** The searches under way for a cover whose names `matches` accepts. */
  matching(matches: (artist: string, album: string) => boolean): CoverFlight[] {
    return [...this.flights].filter((flight) => matches(flight.artist, flight.album));
  }
}
