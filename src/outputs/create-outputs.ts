import { isOutputType, type OutputType } from '../config/output-types';
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

function createOutput(config: OutputConfig, deps: OutputDeps): Output {
  // The schema checked that each type has its required keys (config/output-types.ts OUTPUT_TYPE_FACTS).
  if (!isOutputType(config.type)) throw new Error(`output ${config.name}: unknown type ${String(config.type)}`);
  return BUILDERS[config.type](config, deps);
}

type Builder = (config: OutputConfig, deps: OutputDeps) => Output;

/** One builder per output type of src/config/output-types.ts: a type added there is a compile error here until built. */
const BUILDERS: Record<OutputType, Builder> = {
  webhook: ({ name, url, secret }) => createWebhookOutput({ name, url: url ?? '', secret: secret ?? '' }),
  discord: ({ name, url }, { images }) => createDiscordOutput({ name, url: url ?? '' }, images),
  icecast: ({ name, url, password, user, format }) => createIcecastOutput({ name, url: url ?? '', password: password ?? '', ...optional({ user, format }) }),
  shoutcast: ({ name, url, password, sid, format }) => createShoutcastOutput({ name, url: url ?? '', password: password ?? '', ...optional({ sid, format }) }),
  mqtt: (config, { images, logger, instance }) =>
    createMqttOutput(
      {
        name: config.name,
        url: config.url ?? '',
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
    ),
  url: ({ name, url, method, headers, body }) => createUrlOutput({ name, url: url ?? '', ...optional({ method, headers, body }) }),
  listenbrainz: ({ name, token, url }, { records }) => createListenBrainzOutput({ name, token: token ?? '', ...optional({ url }) }, records),
  lastfm: ({ name, apiKey, apiSecret, sessionKey, url }, { records }) =>
    createLastFmOutput({ name, apiKey: apiKey ?? '', apiSecret: apiSecret ?? '', sessionKey: sessionKey ?? '', ...optional({ url }) }, records),
  obs: (config, { images, logger }) =>
    createObsOutput(
      {
        name: config.name,
        url: config.url ?? '',
        input: config.input ?? '',
        ...optional({ password: config.password, format: config.format, imageInput: config.imageInput, imagePath: config.imagePath }),
      },
      images,
      logger,
    ),
  rds: ({ name, url, format, ps, rtPlus }) => createRdsOutput({ name, url: url ?? '', ...optional({ format, ps, rtPlus }) }),
  dls: ({ name, path, format }) => createDlsOutput({ name, path: path ?? '', ...optional({ format }) }),
};

/** The keys that are set (exactOptionalPropertyTypes: an absent key is not an undefined one). */
function optional<T extends Record<string, unknown>>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
