import type { IncomingHttpHeaders } from 'node:http';

// docs/several-instances.md "Fresh reads through nginx": a load balancer without an active health
// check (open-source nginx) cannot keep readers from an instance cut off from its database, which
// still answers `/v1/last` with the last track it knew. It marks each proxied read with
// FRESH_ONLY_HEADER; such a read of the current state, asked of an instance that cannot reach its
// database (the same condition as /v1/health/ready's "database unavailable"), is answered 503
// STALE_READ_REFUSED, which the balancer moves on to the next instance. Reads without the header
// keep the contract (docs/decisions.md "Several instances": served from what the instance knew).

/** The request header that asks for a refusal rather than an answer that may be stale. */
export const FRESH_ONLY_HEADER = 'x-svc-fresh-only';

export interface FreshReads {
  /** True when this request must be answered 503 STALE_READ_REFUSED now. */
  refuses(method: string | undefined, url: string | undefined, headers: IncomingHttpHeaders): boolean;
}

/**
 * `paths`: the reads that answer from the current state (the current track, the history, the
 * streams' first answer, the current images). `databaseOk`: whether this instance reaches its
 * database now (store/health.ts).
 */
export function freshReads(paths: Iterable<string>, databaseOk: () => boolean): FreshReads {
  const fresh = new Set(paths);
  return {
    refuses(method, url, headers) {
      if (headers[FRESH_ONLY_HEADER] === undefined) return false;
      if (method !== 'GET' && method !== 'HEAD') return false;
      const path = (url ?? '').split('?')[0] ?? '';
      return fresh.has(path) && !databaseOk();
    },
  };
}
