import { isPlainObject } from '../domain/plain-object';
import { sleep } from '../signals';
import type { SvcClient } from './client';
import { CliError } from './exit-codes';

// `svc last --follow` after a reconnect (docs/cli.md "`svc last`"): the tracks stored while it was
// away, read from GET /v1/history, oldest first, so that no track is skipped whichever instance
// (behind a load balancer) it reconnects to. What cannot be printed is said on stderr: more tracks
// than one catch-up reads, or a gap reaching back past what the server still keeps.

/** The most tracks one catch-up prints (one history page). */
export const MAX_CATCH_UP = 1000;
/** A history page the busy server refused (503) is asked again this many times. */
const ATTEMPTS = 5;

export interface CatchUp {
  /** The /v1/last objects of the records after the given dbid, oldest (lowest dbid) first. */
  tracks: Record<string, unknown>[];
  /** Said on stderr: what could not be caught up. */
  notes: string[];
  /** The server's newest dbid is below the one printed: its database started over. */
  restarted: boolean;
}

export async function catchUpAfter(client: SvcClient, after: number, stop: AbortSignal): Promise<CatchUp> {
  const page = await historyPage(client, stop);
  const records = page.tracks.filter(isPlainObject).map(withoutHistoryFields);
  const newest = Math.max(-1, ...records.map(dbidOf));
  if (records.length > 0 && newest < after) return { tracks: [], notes: [], restarted: true };
  const missed = records.filter((record) => dbidOf(record) > after).sort((a, b) => dbidOf(a) - dbidOf(b));
  const notes: string[] = [];
  const reachedBack = records.some((record) => dbidOf(record) <= after);
  if (!reachedBack && page.more) {
    notes.push(`more than ${MAX_CATCH_UP} tracks were stored while reconnecting; printing the newest ${MAX_CATCH_UP} (see svc history for the rest)`);
  } else if (!reachedBack && after > 0 && missed.length > 0) {
    notes.push(`tracks after dbid ${after} and before dbid ${dbidOf(missed[0])} are no longer kept by the server; the gap is longer than what it keeps`);
  }
  return { tracks: missed, notes, restarted: false };
}

async function historyPage(client: SvcClient, stop: AbortSignal): Promise<{ tracks: unknown[]; more: boolean }> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const answer = await client.getJson(`v1/history?limit=${MAX_CATCH_UP}`);
      const body = isPlainObject(answer.json) ? answer.json : {};
      return { tracks: Array.isArray(body.tracks) ? body.tracks : [], more: typeof body.next === 'string' };
    } catch (error) {
      if (attempt >= ATTEMPTS || stop.aborted || !(error instanceof CliError)) throw error;
      // A busy server (503) or one instance down behind a load balancer: ask again shortly.
      await sleep(250 * 2 ** attempt, stop);
    }
  }
}

function dbidOf(record: Record<string, unknown>): number {
  return typeof record.dbid === 'number' ? record.dbid : -1;
}

/** A history entry is the /v1/last object plus `received_at`: printed like any other track. */
function withoutHistoryFields(record: Record<string, unknown>): Record<string, unknown> {
  const track = { ...record };
  delete track.received_at;
  return track;
}
