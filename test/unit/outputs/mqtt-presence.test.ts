import { availabilityOf, statusTopics, topicSafeInstance } from '../../../src/outputs/mqtt-presence';

// Several instances on one MQTT prefix (docs/outputs.md "mqtt (and Home Assistant)"): each its own
// availability topic, Home Assistant told that any one online is enough.

describe('mqtt availability of several instances', () => {
  it('When instances are known, then discovery lists each topic once, sorted, with availability_mode any', () => {
    expect(availabilityOf('radio', ['b-8902', 'a-8901', 'b-8902'])).toEqual({
      availability: [
        { topic: 'radio/status/a-8901', payload_available: 'online', payload_not_available: 'offline' },
        { topic: 'radio/status/b-8902', payload_available: 'online', payload_not_available: 'offline' },
      ],
      availability_mode: 'any',
    });
    expect(
      availabilityOf(
        'radio',
        Array.from({ length: 50 }, (_, i) => `i${String(i).padStart(2, '0')}`),
      ).availability,
    ).toHaveLength(32);
  });

  it('When a name holds MQTT wildcards, separators or spaces, then its topic level does not', () => {
    expect(topicSafeInstance('host/a+b #1')).toBe('host_a_b__1');
    expect(topicSafeInstance('')).toBe('svc');
    expect(statusTopics('svc', 'h-1')).toEqual({ service: 'svc/status', own: 'svc/status/h-1' });
  });
});
