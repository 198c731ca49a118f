import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import type { MqttClient } from 'mqtt';
import { keyOfCoverUrl } from '../domain/image';
import { fieldText } from '../domain/track';
import type { Logger } from '../log';
import { withDeadline } from '../signals';
import type { ImageStore } from '../store/images';
import { availabilityOf, keepPresence, statusTopics, topicSafeInstance } from './mqtt-presence';
import { redactedTarget, trackDataOf, type Output } from './output';

// `mqtt` (docs/outputs.md "mqtt (and Home Assistant)"): the current track as retained JSON on
// `<topic>/now_playing` (QoS 1), at once on a change and again once enrichment ended; `online`/`offline` on
// `<topic>/status` and on each instance's `<topic>/status/<instance>` (mqtt-presence.ts: last wills,
// so a dead svc reads offline); and, with `homeAssistant`,
// Home Assistant MQTT discovery configs: a sensor with the title and an image entity fed the
// cover's bytes on `<topic>/cover` (Home Assistant's MQTT image: `image_topic`).

export interface MqttConfig {
  name: string;
  url: string;
  username?: string;
  password?: string;
  topic?: string;
  homeAssistant?: boolean;
  discoveryPrefix?: string;
  /** This instance's name in `<topic>/status/<instance>`. */
  instance: string;
}

const PUBLISH_TIMEOUT_MS = 10_000;

export function createMqttOutput(config: MqttConfig, images: Pick<ImageStore, 'get'>, logger: Logger): Output {
  const topic = config.topic ?? 'svc';
  const instance = topicSafeInstance(config.instance);
  const status = statusTopics(topic, instance);
  // Loaded only when an MQTT output is configured: the package takes ~250 ms to load, and every
  // `svc serve` start would pay it.
  const { connect } = require('mqtt') as typeof import('mqtt');
  const clientId = `svc-${config.name}-${randomBytes(4).toString('hex')}`;
  const connection = (id: string, willTopic: string): MqttClient =>
    connect(config.url, {
      clientId: id,
      ...(config.username === undefined ? {} : { username: config.username }),
      ...(config.password === undefined ? {} : { password: config.password }),
      will: { topic: willTopic, payload: Buffer.from('offline'), qos: 1, retain: true },
      reconnectPeriod: 2000,
      connectTimeout: 10_000,
    });
  // One will per connection: this one's is the instance's topic; a second, idle connection
  // carries the service topic's, so a lone instance that dies leaves `offline` there too.
  const client = connection(clientId, status.own);
  const serviceWill = connection(`${clientId}-s`, status.service);
  serviceWill.on('error', () => undefined);
  let reported = false;
  // Home Assistant's image entity takes one content_type from its config: it is announced again
  // when a cover of another type comes.
  let coverType = 'image/jpeg';
  let instances: string[] = [instance];
  const announce = () => {
    if (!config.homeAssistant) return;
    for (const [name, payload] of discoveryConfigs(config, topic, coverType, instances)) client.publish(name, payload, { qos: 1, retain: true });
  };
  client.on('connect', () => {
    reported = false;
  });
  const presence = keepPresence(client, topic, instance, (known) => {
    instances = [...known];
    announce();
  });
  // The broker's own words only: an error never carries the password.
  client.on('error', (error) => {
    if (reported) return;
    reported = true;
    const code = (error as { code?: unknown }).code;
    logger.warn(`output ${config.name}: MQTT broker: ${typeof code === 'string' || typeof code === 'number' ? String(code) : 'error'}`);
  });

  return {
    name: config.name,
    type: 'mqtt',
    feeds: { changed: 'track.changed', settled: 'track.settled', restored: 'track.deleted' },
    latestOnly: true,
    target: redactedTarget(config.url),
    async send(message, signal) {
      // Offline, the client would queue and send later behind our back: retry instead.
      if (!client.connected) return { outcome: 'retry', error: 'not connected to the broker' };
      const publishes = [client.publishAsync(`${topic}/now_playing`, message.payload, { qos: 1, retain: true })];
      if (config.homeAssistant) {
        const key = keyOfCoverUrl(fieldText(trackDataOf(message), 'coverurl') ?? '');
        const cover = key ? await images.get(key) : null;
        if (cover && cover.mimeType !== coverType) {
          coverType = cover.mimeType;
          const [, image] = discoveryConfigs(config, topic, coverType, instances);
          publishes.push(client.publishAsync(image[0], image[1], { qos: 1, retain: true }));
        }
        // An empty retained message clears the previous track's cover.
        publishes.push(client.publishAsync(`${topic}/cover`, cover?.bytes ?? Buffer.alloc(0), { qos: 1, retain: true }));
      }
      // Out of time, or the delivery cut short: either way no PUBACK came. The timer goes with the answer.
      const outcome = await withDeadline(
        PUBLISH_TIMEOUT_MS,
        [signal],
        (deadline) =>
          new Promise<'published' | 'timeout' | 'refused'>((resolve) => {
            deadline.addEventListener('abort', () => resolve('timeout'), { once: true });
            Promise.all(publishes).then(
              () => resolve('published'),
              () => resolve('refused'),
            );
          }),
      );
      if (outcome === 'published') return { outcome: 'delivered' };
      // A send cut short by the stop (the dispatcher's abort, not its deadline's TimeoutError) is no
      // lost PUBACK: the connection stays, for close() to say `offline` on it.
      if (outcome === 'timeout' && !stoppedBy(signal)) dropUnacknowledged(client);
      return { outcome: 'retry', error: outcome === 'timeout' ? 'no PUBACK within 10 s' : 'publish refused by the broker' };
    },
    async close() {
      // A clean stop says offline itself (the wills are only for a death); the service stays
      // online while another instance is. With others seen online, the service-will connection
      // is dropped without a DISCONNECT: the broker publishes its will, which an instance still
      // serving answers with `online`; when every instance stops at once, none answers and the
      // service ends `offline` (docs/outputs.md "mqtt (and Home Assistant)").
      const othersOnline = presence.stop().othersOnline;
      const offline = othersOnline ? [status.own] : [status.own, status.service];
      if (client.connected) await Promise.all(offline.map((name) => client.publishAsync(name, 'offline', { qos: 1, retain: true }))).catch(() => undefined);
      await Promise.all([client.endAsync(), serviceWill.endAsync(othersOnline)]);
    },
  };
}

/** Whether `signal` ended the send for a stop rather than a time limit (signals.ts deadlines abort with a TimeoutError). */
function stoppedBy(signal: AbortSignal): boolean {
  return signal.aborted && !(signal.reason instanceof DOMException && signal.reason.name === 'TimeoutError');
}

/**
 * A publish that got no PUBACK in time is told to the dispatcher as not delivered, so it must never
 * arrive later: after a silent partition heals, or resent by mqtt.js from its store on reconnect, it
 * would land after a newer track another instance published meanwhile, and stay retained. So the
 * unacknowledged publishes leave the client's store, and the connection is reset (a TCP RST, which
 * discards what the kernel has not sent yet); the client connects again by itself, and says
 * `online` and announces again on connect. The dispatcher retries, or sends a newer track instead.
 */
function dropUnacknowledged(client: MqttClient): void {
  for (const id of Object.keys(client.outgoing)) client.removeOutgoingMessage(Number(id));
  const stream = client.stream as Partial<Pick<Socket, 'resetAndDestroy'>> & { destroy(): void };
  if (typeof stream.resetAndDestroy === 'function') stream.resetAndDestroy();
  else stream.destroy();
}

/**
 * Home Assistant MQTT discovery: `<discoveryPrefix>/<component>/<node>/<object>/config`, retained.
 * Home Assistant takes a-z, 0-9, `_` and `-` in a node id, so the output's name goes in as it is.
 */
function discoveryConfigs(
  config: Pick<MqttConfig, 'name' | 'discoveryPrefix'>,
  topic: string,
  coverType: string,
  instances: readonly string[],
): [[string, string], [string, string]] {
  const { name } = config;
  const prefix = config.discoveryPrefix ?? 'homeassistant';
  const node = `svc_${name}`;
  const device = { identifiers: [node], name: `svc ${name}`, manufacturer: 'svc' };
  const availability = availabilityOf(topic, instances);
  const sensor = {
    name: 'Now playing',
    unique_id: `${node}_now_playing`,
    state_topic: `${topic}/now_playing`,
    // A sensor's state holds at most 255 characters; the whole record is in its attributes.
    value_template: "{{ (value_json.title | default('')) | truncate(255, true, '') }}",
    json_attributes_topic: `${topic}/now_playing`,
    icon: 'mdi:music',
    device,
    ...availability,
  };
  const image = { name: 'Cover', unique_id: `${node}_cover`, image_topic: `${topic}/cover`, content_type: coverType, device, ...availability };
  return [
    [`${prefix}/sensor/${node}/now_playing/config`, JSON.stringify(sensor)],
    [`${prefix}/image/${node}/cover/config`, JSON.stringify(image)],
  ];
}
