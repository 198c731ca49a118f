import type { Enricher } from '../../src/enrich/enricher';

/** An enricher that waits `delayFor(track)` ms, then adds `fields`; it ignores abort on purpose when told to. */
export function delayingEnricher(
  delayFor: (track: Readonly<Record<string, unknown>>) => number,
  fields: Record<string, string> = {},
  options: { ignoreAbort?: boolean } = {},
): Enricher {
  return {
    name: 'test-delay',
    enrich: (track, { signal }) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve({ fields }), delayFor(track));
        if (!options.ignoreAbort) {
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(new Error('aborted'));
          });
        }
      }),
  };
}
