import fs from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import yaml from 'js-yaml';
import { request, type JsonResponse } from '../../helpers/http';
import { startReceiver, type Receiver } from '../../helpers/receiver';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// docs/openapi.yaml is the machine-readable API reference. Every exchange below is a real request
// to a real server; its status must be documented for that path and method, its Content-Type
// must be one the operation lists, and a JSON body must validate against the documented schema.
// Every operation of the document must be exercised, so a new endpoint cannot go undocumented
// and a documented one cannot go untested.

const DOC_FILE = path.join(__dirname, '../../../docs/openapi.yaml');

interface Operation {
  responses: Record<string, { content?: Record<string, unknown>; $ref?: string }>;
}
interface OpenApiDoc {
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, { content?: Record<string, unknown> }> };
}

const doc = yaml.load(fs.readFileSync(DOC_FILE, 'utf8')) as OpenApiDoc;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(doc, 'openapi');

const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

function templateOf(pathname: string): string | undefined {
  return Object.keys(doc.paths).find((template) => {
    const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`);
    return pattern.test(pathname);
  });
}

/** Checks one real answer against the document; returns "METHOD template" for the coverage list. */
function check(method: string, url: string, response: JsonResponse): string {
  const pathname = new URL(url).pathname;
  const template = templateOf(pathname);
  if (!template) throw new Error(`${pathname} is answered but not in docs/openapi.yaml`);
  const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const operation = doc.paths[template]?.[verb];
  if (!operation) throw new Error(`${method} ${template} is answered but not in docs/openapi.yaml`);
  const status = String(response.status);
  const documented = operation.responses[status];
  if (!documented) throw new Error(`${method} ${template} answered ${status}, which docs/openapi.yaml does not list`);
  const responseKey = documented.$ref ? documented.$ref.split('/').pop() : undefined;
  const content = responseKey ? doc.components.responses[responseKey]?.content : documented.content;
  if (content && method !== 'HEAD') {
    const type = (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
    const mediaType = Object.keys(content).find((listed) => listed === type || (listed.endsWith('/*') && type.startsWith(listed.slice(0, -1))));
    if (!mediaType) throw new Error(`${method} ${template} ${status} answered ${type}; documented: ${Object.keys(content).join(', ')}`);
    if (mediaType === 'application/json') {
      const base = responseKey
        ? pointer('components', 'responses', responseKey, 'content', mediaType, 'schema')
        : pointer('paths', template, verb, 'responses', status, 'content', mediaType, 'schema');
      const valid = ajv.validate({ $ref: `openapi#/${base}` }, response.json);
      if (!valid) throw new Error(`${method} ${template} ${status}: ${ajv.errorsText()} in ${response.text.slice(0, 300)}`);
    }
  }
  return `${verb.toUpperCase()} ${template}`;
}

function asObjectOf(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`not an object: ${JSON.stringify(value)}`);
  return value as Record<string, unknown>;
}

describe('docs/openapi.yaml against real answers', () => {
  let server: TestServer;
  const exercised = new Set<string>();
  const secret = 'openapi-secret';

  let receiver: Receiver;
  let refused: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    refused = await startReceiver();
    await refused.close();
    const signing = `whsec_${Buffer.from('openapi test signing secret').toString('base64')}`;
    const outputs = [
      { name: 'hook', type: 'webhook', url: `${receiver.url}/in`, secret: signing },
      { name: 'down', type: 'webhook', url: refused.url, secret: signing },
    ];
    server = await startTestServer({ config: { secret, outputs } as never });
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  async function exchange(method: string, pathAndQuery: string, init: RequestInit = {}): Promise<JsonResponse> {
    const url = `${server.url}${pathAndQuery}`;
    const response = await request(url, { ...init, method });
    exercised.add(check(method, url, response));
    return response;
  }
  const auth = { 'X-SVC-Client-Auth': secret };
  const json = { 'Content-Type': 'application/json', ...auth };

  test('When nothing has played, then status, last and history answer as documented', async () => {
    await exchange('GET', '/v1/status');
    await exchange('GET', '/v1/health/live');
    await exchange('GET', '/v1/health/ready');
    expect((await exchange('GET', '/v1/last')).json).toEqual({});
    await exchange('GET', '/v1/history');
    await exchange('GET', '/v1/outputs', { headers: auth });
    await exchange('GET', '/v1/outputs');
    expect((await exchange('POST', '/v1/outputs/hook/test', { headers: auth })).json).toEqual({ error: 'No current track to send' });
    expect((await exchange('POST', '/v1/outputs/nope/test', { headers: auth })).json).toEqual({ error: "No output named 'nope'" });
  });

  test('When tracks are submitted, then every answer of the write and read endpoints is documented', async () => {
    const first = await exchange('POST', '/v1/remoteinput', {
      headers: json,
      body: JSON.stringify({ artist: 'Burial', title: 'Archangel', bpm: '139', isrc: ['GBCEL0700074'], title2: 'x'.repeat(1200) }),
    });
    expect(first.status).toBe(200);
    await exchange('GET', `/v1/remoteinput?artist=Moderat&title=A%20New%20Error&secret=${secret}`);
    await exchange('POST', '/v1/remoteinput', { headers: json, body: '{"artist":' });
    await exchange('POST', '/v1/remoteinput', { headers: { 'Content-Type': 'application/json' }, body: '{"artist":"a"}' });
    await exchange('POST', '/v1/remoteinput', { headers: { 'Content-Type': 'image/png', ...auth }, body: 'x' });
    await exchange('POST', '/v1/remoteinput', { headers: json, body: JSON.stringify({ artist: 'x'.repeat(2_000_000) }) });

    const last = await exchange('GET', '/v1/last');
    await exchange('GET', '/v1/last', { headers: { 'If-None-Match': last.headers.get('etag') ?? '' } });
    const page = await exchange('GET', '/v1/history?limit=1');
    expect(page.json).toHaveProperty('next');
    await exchange('GET', '/v1/history', { headers: { 'If-None-Match': page.headers.get('etag') ?? '' } });
    await exchange('GET', '/v1/history?limit=0');
    expect((await exchange('PATCH', '/v1/history/1', { headers: json, body: JSON.stringify({ label: 'Hyperdub', bpm: null }) })).status).toBe(200);
    await exchange('PATCH', '/v1/history/1', { headers: json, body: JSON.stringify({ kind: 'jingle' }) });
    await exchange('PATCH', '/v1/history/1', { headers: { 'Content-Type': 'application/json' }, body: '{}' });
    await exchange('PATCH', '/v1/history/999', { headers: json, body: '{}' });
    await exchange('PATCH', '/v1/history/1', { headers: { 'Content-Type': 'image/png', ...auth }, body: 'x' });
    await exchange('PATCH', '/v1/history/1', { headers: json, body: JSON.stringify({ artist: 'x'.repeat(2_000_000) }) });
    await exchange('DELETE', '/v1/history/1', { headers: auth });
    await exchange('DELETE', '/v1/history/1', { headers: auth });
    await exchange('DELETE', '/v1/history/x', { headers: auth });
    await exchange('DELETE', '/v1/history/2');

    for (const text of ['/v1/last.txt', '/index.txt']) {
      const line = await exchange('GET', `${text}?format=${encodeURIComponent('{{title}} by {artist}')}`);
      await exchange('GET', `${text}?format=${encodeURIComponent('{{title}} by {artist}')}`, { headers: { 'If-None-Match': line.headers.get('etag') ?? '' } });
      await exchange('GET', `${text}?format=%7B`);
    }
    for (const image of ['/cover.png', '/artistthumb.png', '/artistbanner.png', '/artistlogo.png', '/artistfanart.png']) {
      const answer = await exchange('GET', image);
      await exchange('GET', image, { headers: { 'If-None-Match': answer.headers.get('etag') ?? '' } });
    }
    expect((await exchange('POST', '/v1/outputs/hook/test', { headers: auth })).json).toMatchObject({ name: 'hook', outcome: 'delivered', status: 200 });
    expect((await exchange('POST', '/v1/outputs/down/test', { headers: auth })).json).toMatchObject({ name: 'down', outcome: 'retry' });
    const outputs = await exchange('GET', '/v1/outputs', { headers: auth });
    expect(outputs.json).toMatchObject({ outputs: [{ name: 'hook', state: 'ok' }, { name: 'down' }] });
    // The play log: an explicit end (and none left to end), and Icecast's URL authentication.
    expect((await exchange('POST', '/v1/remoteinput/end', { headers: json, body: '{"channel":"main"}' })).status).toBe(200);
    await exchange('POST', '/v1/remoteinput/end', { headers: json, body: '{"channel":"main"}' });
    await exchange('POST', '/v1/remoteinput/end', { headers: json, body: '{"channel":5}' });
    await exchange('POST', '/v1/remoteinput/end', { headers: { 'Content-Type': 'application/json' }, body: '{}' });
    const form = { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: 'Basic Og==' };
    const added = await exchange('POST', `/v1/icecast/listeners?secret=${secret}`, {
      headers: form,
      body: 'action=listener_add&server=127.0.0.1&port=8000&client=7&mount=%2flive%2emp3&user=&pass=&ip=127.0.0.1&agent=curl',
    });
    expect(added.headers.get('icecast-auth-user')).toBe('1');
    await exchange('POST', `/v1/icecast/listeners?secret=${secret}`, { headers: form, body: 'action=dance' });
    const wrong = await exchange('POST', '/v1/icecast/listeners?secret=wrong', { headers: form, body: 'action=listener_add&client=8&mount=%2flive' });
    expect([wrong.status, wrong.headers.get('icecast-auth-user')]).toEqual([403, '1']);
    // The stream never ends, so its 200 is exercised with HEAD (headers only).
    await exchange('HEAD', '/v1/events');
    await exchange('GET', '/v1/events?since=x');
  });

  test('When the song-request queue is used, then every answer is documented (docs/song-requests.md)', async () => {
    const added = await exchange('POST', '/v1/requests', {
      headers: json,
      body: JSON.stringify({ requester: 'viewer1', artist: 'Radiohead', title: 'Creep' }),
    });
    await exchange('POST', '/v1/requests', { headers: json, body: JSON.stringify({ requester: 'viewer1', artist: 'Radiohead', title: 'Creep' }) });
    await exchange('POST', '/v1/requests', { headers: json, body: JSON.stringify({ requester: 'viewer2', query: '"Breed" by Nirvana' }) });
    await exchange('POST', '/v1/requests', { headers: json, body: JSON.stringify({ requester: 'viewer2' }) });
    await exchange('POST', '/v1/requests', { headers: json, body: JSON.stringify({ artist: 'A', title: 'T' }) });
    await exchange('POST', '/v1/requests', { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ requester: 'x', query: 'y' }) });
    await exchange('GET', '/v1/requests', { headers: auth });
    await exchange('GET', '/v1/requests');
    await exchange('DELETE', '/v1/requests?artist=Nirvana&title=Breed', { headers: auth });
    await exchange('DELETE', '/v1/requests?artist=Nirvana&title=Breed', { headers: auth });
    await exchange('DELETE', '/v1/requests?requester=viewer1', { headers: auth });
    await exchange('DELETE', '/v1/requests');
    await exchange('DELETE', `/v1/requests/${String(asObjectOf(added.json).request_id)}`, { headers: auth });
    await exchange('DELETE', '/v1/requests/999999', { headers: auth });
    await exchange('DELETE', '/v1/requests/x', { headers: auth });
    await exchange('DELETE', '/v1/requests/1');
    await exchange('DELETE', '/v1/requests', { headers: auth });
    await exchange('GET', '/v1/lumia/version?plugin_version=1.0.0');
    await exchange('GET', '/v1/lumia/version');
  });

  test('When reports are asked, then the file, the check and every refusal answer as documented', async () => {
    const range = 'from=2000-01-01&to=2000-12-31';
    // No reports.service here: bmi names a problem; an empty year is one for every format.
    expect((await exchange('GET', `/v1/reports/prs?${range}`)).status).toBe(403);
    expect((await exchange('GET', `/v1/reports/bmi?${range}`, { headers: auth })).status).toBe(422);
    expect((await exchange('GET', `/v1/reports/prs?${range}`, { headers: auth })).status).toBe(422);
    expect((await exchange('GET', `/v1/reports/prs?${range}&allow_problems=1`, { headers: auth })).status).toBe(200);
    expect((await exchange('GET', `/v1/reports/bmi?${range}&allow_problems=1`, { headers: auth })).status).toBe(200);
    expect((await exchange('GET', '/v1/reports/bmi?from=2000-01-02&to=2000-01-01', { headers: auth })).status).toBe(400);
    expect((await exchange('GET', `/v1/reports/gema?${range}`, { headers: auth })).status).toBe(404);
    expect((await exchange('GET', `/v1/reports/bmi/check?${range}`, { headers: auth })).status).toBe(200);
    expect((await exchange('GET', `/v1/reports/bmi/check?${range}`)).status).toBe(403);
    expect((await exchange('GET', '/v1/reports/bmi/check?from=x&to=y', { headers: auth })).status).toBe(400);
    expect((await exchange('GET', `/v1/reports/gema/check?${range}`, { headers: auth })).status).toBe(404);
  });

  test('When pages, images and stream paths are fetched over plain HTTP, then they answer as documented', async () => {
    for (const page of ['/', '/slideshow', '/history', '/favicon.ico', '/assets/overlay.css', '/assets/overlay.js']) {
      expect((await exchange('GET', page)).status).toBe(200);
    }
    await exchange('GET', '/assets/nothing.css');
    await exchange('GET', `/cover/${'0'.repeat(64)}`);
    await exchange('GET', '/v1/images/ws');
    await exchange('GET', '/wsstream');
    await exchange('GET', '/wsartistfanartstream');
    for (const page of ['/history/', '/slideshow/']) expect((await exchange('GET', page, { redirect: 'manual' })).status).toBe(308);
    // No staticDir here: nothing is served there (static-and-csp.test.ts serves a folder).
    for (const file of ['/static/overlay.css', '/httpstatic/overlay.css']) expect((await exchange('GET', file)).status).toBe(404);
  });

  test('Then every operation in docs/openapi.yaml was exercised by a real request', () => {
    const documented = Object.entries(doc.paths).flatMap(([template, operations]) =>
      Object.keys(operations)
        .filter((verb) => ['get', 'post', 'put', 'delete', 'patch'].includes(verb))
        .map((verb) => `${verb.toUpperCase()} ${template}`),
    );
    expect(documented.filter((operation) => !exercised.has(operation))).toEqual([]);
  });
});
