import type { Enricher } from '../../src/enrich/enricher';

type Track = Readonly<Record<string, unknown>>;

export interface DelayingEnricher extends Enricher {
  /** Resolves once enrichment of a matching track has begun (at once if it already has): a signal to wait for, not a sleep. */
  started(match?: (track: Track) => boolean): Promise<void>;
  /** Resolves once enrichment of a matching track has handed over its fields (even after an abort it ignored). */
  finished(match?: (track: Track) => boolean): Promise<void>;
}

/** Tracks that reached one moment of enrichment, and promises waiting for a matching one. */
function milestone() {
  const seen: Track[] = [];
  const waiting: { match: (track: Track) => boolean; resolve: () => void }[] = [];
  return {
    reached(track: Track): void {
      seen.push(track);
      for (const waiter of waiting.filter((candidate) => candidate.match(track))) {
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve();
      }
    },
    when(match: (track: Track) => boolean = () => true): Promise<void> {
      if (seen.some(match)) return Promise.resolve();
      return new Promise((resolve) => waiting.push({ match, resolve }));
    },
  };
}

/** An enricher that waits `delayFor(track)` ms, then adds `fields`; it ignores abort on purpose when told to. */
export function delayingEnricher(
  delayFor: (track: Track) => number,
  fields: Record<string, string> = {},
  options: { ignoreAbort?: boolean } = {},
): DelayingEnricher {
  const begun = milestone();
  const done = milestone();
  return {
    name: 'test-delay',
    started: (match) => begun.when(match),
    finished: (match) => done.when(match),
    enrich: (track, { signal }) =>
      new Promise((resolve, reject) => {
        begun.reached(track);
        const timer = setTimeout(() => {
          resolve({ fields });
          done.reached(track);
        }, delayFor(track));
        if (!options.ignoreAbort) {
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(new Error('aborted'));
          });
        }
      }),
  };
}
