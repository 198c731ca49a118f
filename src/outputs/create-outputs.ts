import type { FrozenConfig } from '../config/schema';
import type { Logger } from '../log';
import type { ImageStore } from '../store/images';
import { createDiscordOutput } from './discord';
import { createIcecastOutput } from './icecast';
import { createMqttOutput } from './mqtt';
import type { Output } from './output';
import { createShoutcastOutput } from './shoutcast';
import { createWebhookOutput } from './webhook';

// The configured `outputs` list as Output objects, one file per type (docs/outputs.md).

type OutputConfig = FrozenConfig['outputs'][number];

/** `instance`: this instance's name where an output's key `instance` does not give one (mqtt's availability topic). */
export function createOutputs(configs: readonly OutputConfig[], images: Pick<ImageStore, 'get'>, logger: Logger, instance: string): Output[] {
  return configs.map((config) => createOutput(config, images, logger, instance));
}

function createOutput(config: OutputConfig, images: Pick<ImageStore, 'get'>, logger: Logger, instance: string): Output {
  // The schema checked that each type has its required keys (config/schema.ts OUTPUT_TYPE_KEYS).
  const url = config.url ?? '';
  const password = config.password ?? '';
  switch (config.type) {
    case 'webhook':
      return createWebhookOutput({ name: config.name, url, secret: config.secret ?? '' });
    case 'discord':
      return createDiscordOutput({ name: config.name, url }, images);
    case 'icecast':
      return createIcecastOutput({ name: config.name, url, password, ...optional({ user: config.user, format: config.format }) });
    case 'shoutcast':
      return createShoutcastOutput({ name: config.name, url, password, ...optional({ sid: config.sid, format: config.format }) });
    case 'mqtt':
      return createMqttOutput(
        {
          name: config.name,
          url,
          instance: config.instance ?? instance,
          ...optional({ username: config.username, password: config.password, topic: config.topic, homeAssistant: config.homeAssistant }),
        },
        images,
        logger,
      );
  }
}

/** The keys that are set (exactOptionalPropertyTypes: an absent key is not an undefined one). */
function optional<T extends Record<string, unknown>>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
