/** A JSON object (not an array, not null): what a parsed body, config or frame must be. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
