// Small wrappers over the global fetch, so tests read like the requests they make.

export interface JsonResponse {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed body, or undefined when the body is empty or not JSON. */
  json: unknown;
}

export async function request(url: string, init: RequestInit = {}): Promise<JsonResponse> {
  // One connection per request: a test that restarts its server never meets a pooled keep-alive
  // socket that the old server closed (no sleep needed for the client to notice).
  const headers = new Headers(init.headers);
  if (!headers.has('connection')) headers.set('connection', 'close');
  const response = await fetch(url, { ...init, headers });
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return request(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function getWithQuery(url: string, query: Record<string, string>, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return request(`${url}?${new URLSearchParams(query).toString()}`, { headers });
}

/** Narrows a parsed body to an object, failing the test with the body otherwise. */
export function asObject(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`expected a JSON object, got ${JSON.stringify(value)}`);
  }
  return value as Record<string, unknown>;
}
