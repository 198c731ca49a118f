import type { OutputMessage } from '../../src/store/outputs';

/** A queued message for one output's send(), as the dispatcher hands it over. */
export function messageOf(payload: object, createdAt = Date.now()): OutputMessage {
  return { id: 1, attempts: 0, output: 'out', dbid: 7, kind: 'track.changed', messageId: 'msg_1', payload: JSON.stringify(payload), createdAt };
}
