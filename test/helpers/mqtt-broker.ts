import { randomBytes } from 'node:crypto';
import { connectAsync } from 'mqtt';
import { MQTT_TEST_URL } from './peers';

// The machine's Mosquitto (127.0.0.1:1883, or SVC_TEST_MQTT_URL: test/helpers/peers.ts) as the MQTT tests use it: read a retained message as a
// fresh subscriber gets it, and clear the retained messages a test left under its own prefix.

export const BROKER = MQTT_TEST_URL;

/** Every retained message under `filter` (a topic filter with `+`/`#`), as a fresh subscriber gets them. */
export async function retainedUnder(filter: string): Promise<Map<string, string>> {
  const client = await connectAsync(BROKER, { clientId: `svc-test-read-${randomBytes(4).toString('hex')}` });
  const found = new Map<string, string>();
  try {
    client.on('message', (topic, payload, packet) => {
      if (packet.retain) found.set(topic, payload.toString('utf8'));
    });
    await client.subscribeAsync(filter, { qos: 1 });
    // Mosquitto sends the retained messages right after the SUBACK; a marker published after them
    // (on a topic of this reader's own) arrives once they all have.
    const marker = `svc-test-marker/${randomBytes(6).toString('hex')}`;
    const markerSeen = new Promise<void>((resolve) => client.on('message', (topic) => topic === marker && resolve()));
    await client.subscribeAsync(marker, { qos: 1 });
    await client.publishAsync(marker, 'x', { qos: 1 });
    await markerSeen;
    return found;
  } finally {
    await client.endAsync();
  }
}

/** Clears every retained message under `filter` and on `topics`. */
export async function clearRetained(filter: string, topics: readonly string[] = []): Promise<void> {
  const names = [...(await retainedUnder(filter)).keys(), ...topics];
  const client = await connectAsync(BROKER, { clientId: `svc-test-clean-${randomBytes(4).toString('hex')}` });
  try {
    for (const topic of names) await client.publishAsync(topic, '', { retain: true, qos: 1 });
  } finally {
    await client.endAsync();
  }
}
