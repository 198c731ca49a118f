/** Records per /v1/history page (docs/decisions.md "History": `limit` 1..1000, default 100). */
export const HISTORY_PAGE_LIMIT = { default: 100, max: 1000 } as const;

/** A dbid as text (a path segment, a query value, a CLI argument): a positive safe integer, else undefined. */
export function parseDbid(value: string): number | undefined {
  if (!/^[1-9]\d{0,15}$/.test(value)) return undefined;
  const dbid = Number(value);
  return Number.isSafeInteger(dbid) ? dbid : undefined;
}
