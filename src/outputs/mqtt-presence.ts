import type { MqttClient } from 'mqtt';

// Availability of the mqtt output when several instances share one broker topic (docs/outputs.md
// "mqtt (and Home Assistant)", docs/decisions.md "Delivery promises"). Each instance has
// `<topic>/status/<instance>` with its own last will; `<topic>/status` is the service's: every
// instance says `online` there, and one that hears it read `offline` (another instance's will)
// while it is itself up says `online` again. The instances every instance has heard of are
// listed in the Home Assistant discovery configs with `availability_mode: any`.

/** Instances listed at most: a broker's retained topics of long-gone names must not grow a config without end. */
const MAX_LISTED_INSTANCES = 32;

export interface Availability {
  availability: { topic: string; payload_available: string; payload_not_available: string }[];
  availability_mode: 'any';
}

/** The service's topic and one instance's (pure). */
export function statusTopics(topic: string, instance: string): { service: string; own: string } {
  return { service: `${topic}/status`, own: `${topic}/status/${instance}` };
}

/** Home Assistant's availability list: every known instance's topic, available when any says online (pure). */
export function availabilityOf(topic: string, instances: Iterable<string>): Availability {
  const names = [...new Set(instances)].sort().slice(0, MAX_LISTED_INSTANCES);
  return {
    availability: names.map((name) => ({ topic: statusTopics(topic, name).own, payload_available: 'online', payload_not_available: 'offline' })),
    availability_mode: 'any',
  };
}

/** An instance name that may stand in a topic level: no wildcard, separator or space. */
export function topicSafeInstance(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64) || 'svc';
}

export interface Presence {
  /** Stops answering a service `offline` (a clean stop says it itself) and tells whether another instance's topic last read `online`. */
  stop(): { othersOnline: boolean };
}

/**
 * Keeps this instance's part: announces it on connect, hears the others and answers a service
 * `offline` while up. `onInstances` is called with the known instances whenever a new one is heard.
 */
export function keepPresence(client: MqttClient, topic: string, instance: string, onInstances: (instances: Iterable<string>) => void): Presence {
  const topics = statusTopics(topic, instance);
  const online = new Map<string, boolean>([[instance, true]]);
  const prefix = `${topics.service}/`;
  let stopped = false;
  client.on('connect', () => {
    for (const name of [topics.own, topics.service]) client.publish(name, 'online', { qos: 1, retain: true });
    client.subscribe([topics.service, `${prefix}+`], { qos: 1 });
    onInstances(online.keys());
  });
  client.on('message', (name, payload) => {
    const text = payload.toString();
    if (name === topics.service) {
      if (text === 'offline' && client.connected && !stopped) client.publish(topics.service, 'online', { qos: 1, retain: true });
      return;
    }
    const other = name.startsWith(prefix) ? name.slice(prefix.length) : '';
    if (other === '' || other === instance || text === '') return;
    const isNew = !online.has(other);
    if (isNew && online.size >= MAX_LISTED_INSTANCES) return;
    online.set(other, text === 'online');
    if (isNew) onInstances(online.keys());
  });
  return {
    stop: () => {
      stopped = true;
      return { othersOnline: [...online].some(([name, up]) => up && name !== instance) };
    },
  };
}
