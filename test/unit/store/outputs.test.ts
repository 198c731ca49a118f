import { expansionOf, healthOf, trackPayload, type MessageOf, type OutputChange } from '../../../src/store/outputs';

// The pure parts of the delivery log (docs/outputs.md "Delivery"), shared by both backends.

describe('the delivery log, pure parts', () => {
  it('When a payload is built from the stored JSON, then it is the /v1/last object JSON.stringify would make', () => {
    const metadata = { artist: 'Ä "quoted"', title: 'T', year: 1998, nested: ['x'] };
    expect(trackPayload(41, JSON.stringify(metadata))).toBe(JSON.stringify({ dbid: 41, ...metadata }));
    expect(trackPayload(7, '{}')).toBe('{"dbid":7}');
    expect(trackPayload(7, '{ }')).toBe('{"dbid":7}');
  });

  it("When a held message and its record's end of enrichment are in one batch, then one message is queued, released, in the held one's place", () => {
    const change = (id: number, event: OutputChange['event'], dbid: number): OutputChange => ({ id, event, dbid, payload: `${event}${dbid}`, createdAt: 0 });
    const messageOf: MessageOf = (one, output) => ({
      output,
      dbid: one.dbid,
      kind: 'track.changed',
      messageId: `m${one.id}`,
      payload: one.payload,
      createdAt: 0,
      ...(one.event === 'changed' ? { heldUntil: 10_000 } : {}),
    });
    const { messages } = expansionOf([change(1, 'changed', 1), change(2, 'changed', 2), change(3, 'settled', 1)], new Map([['hook', 0]]), messageOf);
    expect(messages.map(({ dbid, payload, heldUntil }) => ({ dbid, payload, heldUntil }))).toEqual([
      { dbid: 1, payload: 'settled1', heldUntil: undefined },
      { dbid: 2, payload: 'changed2', heldUntil: 10_000 },
    ]);
  });

  it('When a test delivered after the last message failed, then the output is ok; the newest success and error are shown', () => {
    const rows = {
      pending: 0,
      retrying: false,
      superseded: 2,
      lastFinished: { state: 'failed', at: 100 },
      lastSuccess: { at: 50, dbid: 4 },
      lastError: { at: 100, message: 'HTTP 400' },
    };
    expect(healthOf({ ...rows, test: undefined })).toMatchObject({ lastFinishedFailed: true, lastSuccess: { at: 50, dbid: 4 }, superseded: 2 });
    expect(healthOf({ ...rows, test: { at: 120, dbid: 5, error: null } })).toMatchObject({ lastFinishedFailed: false, lastSuccess: { at: 120, dbid: 5 } });
    expect(healthOf({ ...rows, test: { at: 130, dbid: 5, error: 'HTTP 503' } })).toMatchObject({
      lastFinishedFailed: true,
      lastError: { at: 130, message: 'HTTP 503' },
    });
  });
});
