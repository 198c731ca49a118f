// The output types and the keys each takes (docs/outputs.md "Configuration"), without the schema
// library: `svc outputs add` and completion read them when any command starts. Pure data.

// The keys each output type takes besides OUTPUT_COMMON_KEYS.
export const OUTPUT_TYPE_KEYS = {
  webhook: { required: ['url', 'secret'], optional: [] },
  discord: { required: ['url'], optional: [] },
  icecast: { required: ['url', 'password'], optional: ['user', 'format'] },
  shoutcast: { required: ['url', 'password'], optional: ['sid', 'format'] },
  mqtt: { required: ['url'], optional: ['username', 'password', 'topic', 'homeAssistant', 'discoveryPrefix', 'instance'] },
  url: { required: ['url'], optional: ['method', 'headers', 'body'] },
  listenbrainz: { required: ['token'], optional: ['url'] },
  lastfm: { required: ['apiKey', 'apiSecret', 'sessionKey'], optional: ['url'] },
  obs: { required: ['url', 'input'], optional: ['password', 'format', 'imageInput', 'imagePath'] },
  rds: { required: ['url'], optional: ['format', 'ps', 'rtPlus'] },
  dls: { required: ['path'], optional: ['format'] },
} as const satisfies Record<string, { required: readonly string[]; optional: readonly string[] }>;
export type OutputType = keyof typeof OUTPUT_TYPE_KEYS;
export const OUTPUT_COMMON_KEYS = ['name', 'type', 'retryForSeconds', 'delay', 'channel'] as const;
/** The output types, in the order docs/outputs.md lists them; completion and `svc outputs add` read them. */
export const OUTPUT_TYPES = Object.keys(OUTPUT_TYPE_KEYS) as OutputType[];

export function isOutputType(name: string): name is OutputType {
  return Object.hasOwn(OUTPUT_TYPE_KEYS, name);
}

/** Every key an output of this type takes: the common ones, the required, the optional. */
export function outputKeysOf(type: OutputType): readonly string[] {
  return [...OUTPUT_COMMON_KEYS, ...OUTPUT_TYPE_KEYS[type].required, ...OUTPUT_TYPE_KEYS[type].optional];
}
