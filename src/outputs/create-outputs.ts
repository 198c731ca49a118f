import type { FrozenConfig } from '../config/schema';
import type { Logger } from '../log';
import { unknownFieldsWarning } from '../domain/template';
import type { ImageStore } from '../store/images';
import { createDiscordOutput } from './discord';
import { createDlsOutput } from './dls';
import { createIcecastOutput } from './icecast';
import { createLastFmOutput } from './lastfm';
import { createListenBrainzOutput } from './listenbrainz';
import { createMqttOutput } from './mqtt';
import { createObsOutput } from './obs';
import type { Output } from './output';
import { createRdsOutput } from './rds';
import type { RecordLookup } from './scrobbler';
import { createShoutcastOutput } from './shoutcast';
import { createUrlOutput } from './url';
import { createWebhookOutput } from './webhook';

// The configured `outputs` list as Output objects, one file per type (docs/outputs.md).

type OutputConfig = FrozenConfig['outputs'][number];

export interface OutputDeps {
  images: Pick<ImageStore, 'get'>;
  logger: Logger;
  /** This instance's name where an output's key `instance` does not give one (mqtt's availability topic). */
  instance: string;
  /** The scrobblers read an ended play again (its `kind`, its listeners). */
  records?: RecordLookup;
}

export function createOutputs(configs: readonly OutputConfig[], deps: OutputDeps): Output[] {
  for (const config of configs) warnUnknownFields(config, deps.logger);
  return configs.map((config) => createOutput(config, deps));
}

/** Templates the schema checked parse; one that does not is the output's own business to report. */
function warningOf(source: string): string | null {
  try {
    return unknownFieldsWarning(source);
  } catch {
    return null;
  }
}

/** The template keys of an output, and the url output's URL (its query is a template too). */
const TEMPLATE_KEYS = ['format', 'ps', 'body'] as const;

/**
 * A start-up warning for each template that names a field svc does not know (a typo such as
 * `{{artst}}` next to `{{title}}`; a stray brace is already refused by the schema).
 */
function warnUnknownFields(config: OutputConfig, logger: Logger): void {
  const templates: [string, string | undefined][] = TEMPLATE_KEYS.map((key) => [key, config[key]]);
  if (config.type === 'url') templates.push(['url', config.url]);
  for (const [key, source] of templates) {
    const warning = source === undefined ? null : warningOf(source);
    if (warning !== null) logger.warn(`output ${config.name}: ${key}: ${warning}`);
  }
}

function createOutput(config: OutputConfig, { images, logger, instance, records }: OutputDeps): Output {
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
          ...optional({
            username: config.username,
            password: config.password,
            topic: config.topic,
            homeAssistant: config.homeAssistant,
            discoveryPrefix: config.discoveryPrefix,
          }),
        },
        images,
        logger,
      );
    default:
      return createReachOutput(config, images, logger, records);
  }
}

/** The directory, scrobbler, studio and broadcast types (docs/outputs.md). */
function createReachOutput(config: OutputConfig, images: Pick<ImageStore, 'get'>, logger: Logger, records: RecordLookup | undefined): Output {
  const name = config.name;
  switch (config.type) {
    case 'url':
      return createUrlOutput({ name, url: config.url ?? '', ...optional({ method: config.method, headers: config.headers, body: config.body }) });
    case 'listenbrainz':
      return createListenBrainzOutput({ name, token: config.token ?? '', ...optional({ url: config.url }) }, records);
    case 'lastfm':
      return createLastFmOutput(
        { name, apiKey: config.apiKey ?? '', apiSecret: config.apiSecret ?? '', sessionKey: config.sessionKey ?? '', ...optional({ url: config.url }) },
        records,
      );
    case 'obs':
      return createObsOutput(
        {
          name,
          url: config.url ?? '',
          input: config.input ?? '',
          ...optional({ password: config.password, format: config.format, imageInput: config.imageInput, imagePath: config.imagePath }),
        },
        images,
        logger,
      );
    case 'rds':
      return createRdsOutput({ name, url: config.url ?? '', ...optional({ format: config.format, ps: config.ps, rtPlus: config.rtPlus }) });
    case 'dls':
      return createDlsOutput({ name, path: config.path ?? '', ...optional({ format: config.format }) });
    default:
      throw new Error(`output ${name}: unknown type ${config.type}`);
  }
}

/** The keys that are set (exactOptionalPropertyTypes: an absent key is not an undefined one). */
function optional<T extends Record<string, unknown>>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
