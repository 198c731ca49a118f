import { HEARTBEAT, OPENING, parseEventId, recordEvent, trackEvent } from '../../../../../src/server/streams/sse/frames';

describe('the /v1/events text', () => {
  test('An event is `event`, `id`, one `data` line and an empty line; the stream opens with retry 3000', () => {
    expect(trackEvent(7, '{"dbid":7}')).toBe('event: track\nid: 7\ndata: {"dbid":7}\n\n');
    expect(OPENING).toBe('retry: 3000\n\n');
    expect(HEARTBEAT.startsWith(':')).toBe(true);
  });

  test('When a value holds CR or LF, then the data stays one line and parses back to the value', () => {
    const event = recordEvent({ dbid: 3, receivedSeq: 3, receivedAt: '2026-01-01T00:00:00.000Z', metadata: { title: 'a\r\nb\nc' } });
    const lines = event.split('\n');
    expect(lines).toHaveLength(5);
    expect(JSON.parse((lines[2] ?? '').slice('data: '.length))).toEqual({ dbid: 3, title: 'a\r\nb\nc' });
  });

  test.each([
    ['12', 12],
    [' 12 ', 12],
    ['0', 0],
    ['', undefined],
    ['-1', undefined],
    ['1.5', undefined],
    ['abc', undefined],
    ['1234567890123456', undefined],
    [undefined, undefined],
  ])('parseEventId(%j) is %j', (text, expected) => {
    expect(parseEventId(text)).toBe(expected);
  });
});
