import { field, json, loadFixtures, startFake, type FakeReply, type FakeServer, type RecordedRequest } from './fake-server';

// Wikidata's action API, `wbgetentities`, with the rules of its own code:
// wikimedia/mediawiki-extensions-Wikibase @ 0122c931, repo/includes/Api/GetEntities.php
// (getAllowedParams: ids, sites, titles, redirects, props, languages, languagefallback, normalize,
// sitefilter; execute: without `ids` and without `sites`+`titles` the error is `param-missing`;
// an id that does not parse is the error `no-such-entity`; an id that parses but does not exist is
// `{"id": ..., "missing": ""}`), and MediaWiki's ApiMain/ParamValidator conventions: multi-value
// parameters are separated by `|`; an unknown value of a multi-value enum (e.g. `props`) is dropped
// with a warning; an unknown parameter is a warning ("Unrecognized parameter: x."); an unknown
// `action` is the error `badvalue`; errors are HTTP 200 with {"error": {"code", "info"}} and a
// `MediaWiki-API-Error` header; without `format=json` the answer is the HTML `jsonfm` page.
// Wikipedia's REST page summary (`/{lang}/api/rest_v1/page/summary/{title}`, here under a path per
// language instead of a host per language): 404 application/problem+json for an unknown title.

const ACTION_PARAMS = new Set([
  'action',
  'format',
  'formatversion',
  'errorformat',
  'uselang',
  'origin',
  'maxlag',
  'smaxage',
  'maxage',
  'assert',
  'curtimestamp',
  'utf8',
  'ascii',
]);
const GETENTITIES_PARAMS = new Set(['ids', 'sites', 'titles', 'redirects', 'props', 'languages', 'languagefallback', 'normalize', 'sitefilter']);
const PROPS = new Set(['info', 'sitelinks', 'sitelinks/urls', 'aliases', 'labels', 'descriptions', 'claims', 'datatype']);
const DEFAULT_PROPS = 'info|sitelinks|aliases|labels|descriptions|claims|datatype';
const ENTITY_ID = /^[QPL][1-9]\d*$/;

function apiError(code: string, info: string, warnings?: unknown): FakeReply {
  const body = { error: { code, info }, ...(warnings ? { warnings } : {}), servedby: 'fake' };
  return { ...json(200, body), headers: { 'Content-Type': 'application/json; charset=utf-8', 'MediaWiki-API-Error': code } };
}

export async function startWikidataFake(): Promise<FakeServer> {
  const entities = new Map<string, Record<string, unknown>>();
  for (const body of loadFixtures('wikidata').values()) {
    const all = field(body, 'entities');
    if (typeof all === 'object' && all !== null) for (const [id, entity] of Object.entries(all)) entities.set(id, entity as Record<string, unknown>);
  }
  const route = (request: RecordedRequest): FakeReply => {
    if (request.path !== '/w/api.php') return { status: 404, headers: { 'Content-Type': 'text/html' }, body: '<html>Not Found</html>' };
    const { action, ids, props = DEFAULT_PROPS, languages, sitefilter, format } = request.query;
    if (format !== 'json')
      return { status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8' }, body: '<!DOCTYPE html><html><body><pre>jsonfm</pre></body></html>' };
    if (action !== 'wbgetentities') return apiError('badvalue', `Unrecognized value for parameter "action": ${action ?? ''}.`);
    const warnings: string[] = [];
    const unknown = Object.keys(request.query).filter((name) => !ACTION_PARAMS.has(name) && !GETENTITIES_PARAMS.has(name));
    if (unknown.length > 0) warnings.push(`Unrecognized parameter${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}.`);
    const wanted = new Set<string>();
    for (const prop of props.split('|')) {
      if (PROPS.has(prop)) wanted.add(prop);
      else warnings.push(`Unrecognized value for parameter "props": ${prop}`);
    }
    const warned = warnings.length > 0 ? { main: { '*': warnings.join('\n') } } : undefined;
    if (ids === undefined && (request.query.sites === undefined || request.query.titles === undefined)) {
      return apiError('param-missing', 'Either provide the item "ids" or pairs of "sites" and "titles" for corresponding pages', warned);
    }
    const result: Record<string, unknown> = {};
    for (const id of (ids ?? '').split('|').filter((candidate) => candidate !== '')) {
      if (!ENTITY_ID.test(id.toUpperCase())) return apiError('no-such-entity', `Could not find an entity with the ID "${id}".`, warned);
      const normalized = id.toUpperCase();
      const entity = entities.get(normalized);
      if (!entity) {
        result[normalized] = { id: normalized, missing: '' };
        continue;
      }
      const shaped: Record<string, unknown> = { type: 'item', id: normalized };
      if (wanted.has('descriptions')) shaped.descriptions = only(entity.descriptions, languages);
      if (wanted.has('claims')) shaped.claims = entity.claims;
      if (wanted.has('sitelinks')) shaped.sitelinks = only(entity.sitelinks, sitefilter);
      result[normalized] = shaped;
    }
    return json(200, { entities: result, ...(warned ? { warnings: warned } : {}), success: 1 });
  };
  return startFake('wikidata', route);
}

/** `languages=de|en` and `sitefilter=dewiki|enwiki` keep only those keys. */
function only(map: unknown, filter: string | undefined): unknown {
  if (filter === undefined || typeof map !== 'object' || map === null) return map;
  const keep = new Set(filter.split('|'));
  return Object.fromEntries(Object.entries(map).filter(([key]) => keep.has(key)));
}

export async function startWikipediaFake(): Promise<FakeServer> {
  const pages = new Map<string, unknown>();
  for (const body of loadFixtures('wikipedia').values()) {
    pages.set(`${String(field(body, 'lang'))}/${String(field(field(body, 'titles'), 'canonical'))}`, body);
  }
  const route = (request: RecordedRequest): FakeReply => {
    const match = /^\/([a-z-]+)\/api\/rest_v1\/page\/summary\/(.+)$/.exec(request.path);
    const page = match ? pages.get(`${match[1]}/${match[2]}`) : undefined;
    if (page) return json(200, page);
    return json(
      404,
      {
        type: 'https://mediawiki.org/wiki/HyperSwitch/errors/not_found',
        title: 'Not found.',
        method: 'get',
        detail: 'Page or revision not found.',
        uri: request.path,
      },
      { 'Content-Type': 'application/problem+json' },
    );
  };
  return startFake('wikipedia', route);
}
