import { field, json, loadFixtures, startFake, type FakeReply, type FakeServer, type RecordedRequest } from './fake-server';

// Wikidata's action API (`/w/api.php?action=wbgetentities&ids=...&props=...&languages=...
// &sitefilter=...&format=json`, https://www.wikidata.org/wiki/Special:ApiHelp/wbgetentities)
// and Wikipedia's REST page summary (`/{lang}/api/rest_v1/page/summary/{title}`, here under a
// path per language instead of a host per language).

export async function startWikidataFake(): Promise<FakeServer> {
  const entities = new Map<string, Record<string, unknown>>();
  for (const body of loadFixtures('wikidata').values()) {
    const all = field(body, 'entities');
    if (typeof all === 'object' && all !== null) for (const [id, entity] of Object.entries(all)) entities.set(id, entity as Record<string, unknown>);
  }
  const route = (request: RecordedRequest): FakeReply => {
    if (request.path !== '/w/api.php') return { status: 404, headers: { 'Content-Type': 'text/html' }, body: '<html>Not Found</html>' };
    const { action, ids = '', props = '', languages, sitefilter, format } = request.query;
    if (action !== 'wbgetentities' || format !== 'json') return json(200, { error: { code: 'badvalue', info: 'Unrecognized parameters' } });
    const result: Record<string, unknown> = {};
    for (const id of ids.split('|')) {
      const entity = entities.get(id);
      if (!entity) {
        result[id] = { id, missing: '' };
        continue;
      }
      const wanted = new Set(props.split('|'));
      const shaped: Record<string, unknown> = { type: 'item', id };
      if (wanted.has('descriptions')) shaped.descriptions = only(entity.descriptions, languages);
      if (wanted.has('claims')) shaped.claims = entity.claims;
      if (wanted.has('sitelinks')) shaped.sitelinks = only(entity.sitelinks, sitefilter);
      result[id] = shaped;
    }
    return json(200, { entities: result, success: 1 });
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
    return json(404, {
      type: 'https://mediawiki.org/wiki/HyperSwitch/errors/not_found',
      title: 'Not found.',
      method: 'get',
      detail: 'Page or revision not found.',
      uri: request.path,
    }, { 'Content-Type': 'application/problem+json' });
  };
  return startFake('wikipedia', route);
}
