/** Submissions under way: each is kept until it settles, so that a shutdown can wait for them (src/server/start.ts). */
export interface InFlight {
  readonly inFlight: Set<Promise<unknown>>;
  /** Keeps `work` in `inFlight` until it settles, and hands it back. */
  trackInFlight: <T>(work: Promise<T>) => Promise<T>;
}

export function createInFlight(): InFlight {
  const inFlight = new Set<Promise<unknown>>();
  const trackInFlight = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    const forget = () => inFlight.delete(work);
    work.then(forget, forget);
    return work;
  };
  return { inFlight, trackInFlight };
}
