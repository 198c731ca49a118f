/** A JSON object (not an array, not null): what a parsed body, config or frame must be. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `override` merged into `base` key by key where both are plain objects; anything else in
 * `override` replaces, and an undefined value keeps what `base` has. The one deep merge of config
 * layers (src/config/load.ts) and of tests' config overrides.
 */
export function deepMerge<T>(base: T, override: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(override)) return (override === undefined ? base : override) as T;
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) result[key] = deepMerge(result[key], value);
  return result as T;
}
