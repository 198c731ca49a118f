// The output types, the URL schemes and keys each takes (docs/outputs.md "Configuration"), without the schema
// library: `svc outputs add` and completion read them when any command starts. Pure data.

// Each output type's facts that the config needs, in the order docs/outputs.md lists them: the
// URL schemes it talks (`null`: it takes no URL) and the keys it takes besides OUTPUT_COMMON_KEYS.
// This table is the one list of output types: every other list (the factory in
// src/outputs/create-outputs.ts, the blocks in src/cli/commands/output-blocks.ts) is a
// `Record<OutputType, ...>`, so a type added here is a compile error in each until it is there too.
export const OUTPUT_TYPE_FACTS = {
  webhook: { urlScheme: /^https?:/, required: ['url', 'secret'], optional: [] },
  discord: { urlScheme: /^https?:/, required: ['url'], optional: [] },
  icecast: { urlScheme: /^https?:/, required: ['url', 'password'], optional: ['user', 'format'] },
  shoutcast: { urlScheme: /^https?:/, required: ['url', 'password'], optional: ['sid', 'format'] },
  mqtt: { urlScheme: /^mqtts?:/, required: ['url'], optional: ['username', 'password', 'topic', 'homeAssistant', 'discoveryPrefix', 'instance'] },
  url: { urlScheme: /^https?:/, required: ['url'], optional: ['method', 'headers', 'body'] },
  listenbrainz: { urlScheme: /^https?:/, required: ['token'], optional: ['url'] },
  lastfm: { urlScheme: /^https?:/, required: ['apiKey', 'apiSecret', 'sessionKey'], optional: ['url'] },
  obs: { urlScheme: /^wss?:/, required: ['url', 'input'], optional: ['password', 'format', 'imageInput', 'imagePath'] },
  rds: { urlScheme: /^tcp:/, required: ['url'], optional: ['format', 'ps', 'rtPlus'] },
  dls: { urlScheme: null, required: ['path'], optional: ['format'] },
} as const satisfies Record<string, { urlScheme: RegExp | null; required: readonly string[]; optional: readonly string[] }>;
export type OutputType = keyof typeof OUTPUT_TYPE_FACTS;
export const OUTPUT_COMMON_KEYS = ['name', 'type', 'retryForSeconds', 'delay', 'channel'] as const;
/** The output types, in the order docs/outputs.md lists them; completion and `svc outputs add` read them. */
export const OUTPUT_TYPES = Object.keys(OUTPUT_TYPE_FACTS) as OutputType[];

export function isOutputType(name: string): name is OutputType {
  return Object.hasOwn(OUTPUT_TYPE_FACTS, name);
}

/** Whether `url` is in a scheme an output of this type talks (none for a type that takes no URL). */
export function talksUrlScheme(type: OutputType, url: string): boolean {
  const scheme: RegExp | null = OUTPUT_TYPE_FACTS[type].urlScheme;
  return scheme !== null && scheme.test(url);
}

/** Every key an output of this type takes: the common ones, the required, the optional. */
export function outputKeysOf(type: OutputType): readonly string[] {
  return [...OUTPUT_COMMON_KEYS, ...OUTPUT_TYPE_FACTS[type].required, ...OUTPUT_TYPE_FACTS[type].optional];
}
