/** Records per /v1/history page (docs/decisions.md "History": `limit` 1..1000, default 100). */
export const HISTORY_PAGE_LIMIT = { default: 100, max: 1000 } as const;
