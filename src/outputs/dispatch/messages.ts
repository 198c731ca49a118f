import { randomUUID } from 'node:crypto';
import { recordJson } from '../../domain/play';
import type { TrackRecord } from '../../domain/track';
import type { MessageOf } from '../../store/outputs';
import type { Output } from '../output';

// Which message each output gets from a recorded change (docs/outputs.md "Delivery"): the events
// it feeds on, the channel it is bound to, its `delay`, and the hold of a message told once
// enrichment ended. Pure but for the message ids.

export interface MessageRules {
  /** The outputs by name. */
  outputs: ReadonlyMap<string, Output>;
  /** How long a message made from a record still being enriched holds its output's queue, at most. */
  holdMs: number;
  /** The channel an output is bound to, per output name (docs/channels.md "Outputs"); absent: every channel. */
  channels?: ReadonlyMap<string, string> | undefined;
  /** `delay` per output name, seconds (default 0). */
  delaySeconds?: ReadonlyMap<string, number> | undefined;
}

/** The store's `expand` asks this for each output and change: the message to queue, or none. */
export function messageMaker(rules: MessageRules): MessageOf {
  return (change, name) => {
    const feeds = rules.outputs.get(name)?.feeds;
    if (!feeds) return undefined;
    const bound = rules.channels?.get(name);
    if (bound !== undefined && !onChannel(change.payload, bound)) return undefined;
    // An output's `delay` (docs/play-log.md "During, but not before"): its messages wait that long after the change.
    const delayMs = (rules.delaySeconds?.get(name) ?? 0) * 1000;
    const message = {
      output: name,
      dbid: change.dbid,
      messageId: newMessageId(change.createdAt),
      payload: change.payload,
      createdAt: change.createdAt,
      ...(delayMs > 0 ? { notBefore: change.createdAt + delayMs } : {}),
    };
    const kind = feeds[change.event];
    if (kind) return { ...message, kind };
    // Told once enrichment ended: its place in the queue is taken at the change (dbid order),
    // held until the record's settled message releases it or the hold runs out.
    if (change.event === 'changed' && feeds.settled) return { ...message, kind: feeds.settled, heldUntil: change.createdAt + rules.holdMs };
    return undefined;
  };
}

/**
 * Whether a change's payload (a record's /v1/last object) is a play on `channel`. A payload that
 * names no channel (a deletion's `{dbid}`, `{}`) goes to every output: it cannot be told apart.
 */
function onChannel(payload: string, channel: string): boolean {
  try {
    const parsed: unknown = JSON.parse(payload);
    const named = typeof parsed === 'object' && parsed !== null && 'channel' in parsed ? parsed.channel : undefined;
    return typeof named !== 'string' || named === channel;
  } catch {
    return true;
  }
}

/** The /v1/last object of a stored record: what every output builds its message from. */
export function recordPayload(record: TrackRecord): string {
  return JSON.stringify(recordJson(record));
}

/**
 * Standard Webhooks message ids: unique, the same on every retry. The creation time comes first,
 * so a change's rows go in at one end of the store's unique index (random ids touched a page
 * each, about 3 µs an output on every submission's answer); randomUUID's bytes make them unique
 * and come from a cache Node refills in bulk (a randomBytes(16) call per id cost about 9 µs).
 */
export function newMessageId(now: number): string {
  return `msg_${now.toString(36).padStart(9, '0')}${randomUUID().replaceAll('-', '')}`;
}
