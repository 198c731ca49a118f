import { fieldTexts } from '../domain/track';
import { foundFields, image, logDegraded, type Enricher, type Enrichment } from './enricher';
import { asList, asObject, asText } from './json-read';
import { lookupJson, type ServiceDeps } from './service-deps';
import type { WikipediaClient } from './wikipedia';

// Wikidata + Wikipedia (docs/enrichment.md): from the artist's Wikidata item (linked from MusicBrainz),
// its description -> `artistshortbio`, its image (P18, on Wikimedia Commons) -> an artist
// thumbnail, and its Wikipedia article in the configured language (else English) -> `artistlongbio`.

const SERVICE = 'wikidata';
const IMAGE_PROPERTY = 'P18';
const FALLBACK_LANGUAGE = 'en';

/** The parts of a `wbgetentities` entity svc reads, in Wikidata's own shape. */
interface WikidataEntity {
  id: string;
  descriptions: Record<string, { value: string }>;
  claims: { P18?: { mainsnak: { datavalue: { value: string } } }[] };
  sitelinks: Record<string, { title: string }>;
}

/** The answer as cached: `wbgetentities`' own shape, reduced to the one entity asked for. */
interface WikidataAnswer {
  entities: Record<string, WikidataEntity>;
}

export interface WikidataOptions {
  baseUrl: string;
  commonsBaseUrl: string;
  language: string;
  /** Absent when Wikipedia is disabled. */
  wikipedia?: WikipediaClient;
}

export function createWikidata(deps: ServiceDeps, options: WikidataOptions): Enricher {
  const languages = [...new Set([options.language, FALLBACK_LANGUAGE])];

  const entity = (id: string, signal: AbortSignal) => {
    const query =
      `action=wbgetentities&ids=${id}&props=descriptions%7Cclaims%7Csitelinks` +
      `&languages=${languages.join('%7C')}&sitefilter=${languages.map((l) => `${l}wiki`).join('%7C')}&format=json`;
    return lookupJson(
      deps,
      { service: SERVICE, key: `wbgetentities?${query}`, url: `${options.baseUrl}/w/api.php?${query}`, decode: (raw) => decodeEntity(raw, id) },
      signal,
    );
  };

  return {
    name: SERVICE,
    async enrich(track, { signal }) {
      const id = wikidataId(fieldTexts(track, 'artistwebsites'));
      if (id === undefined) return null;
      const item = (await entity(id, signal))?.entities[id];
      if (!item) return null;

      const result: Enrichment = {
        fields: foundFields({ artistshortbio: pick(item.descriptions, languages)?.value }),
        images: image('thumbnail', commonsFileUrl(options.commonsBaseUrl, item.claims.P18?.[0]?.mainsnak.datavalue.value), SERVICE),
      };
      if (options.wikipedia) {
        try {
          const summary = await articleSummary(options.wikipedia, item, languages, signal);
          if (summary) {
            result.fields = { ...result.fields, artistlongbio: summary };
            result.sources = { artistlongbio: 'wikipedia' };
          }
        } catch (error) {
          logDegraded(deps.logger, signal, 'wikipedia summary', error);
        }
      }
      return result;
    },
  };
}

/** The article in the first language that has one with a usable summary. */
async function articleSummary(
  wikipedia: WikipediaClient,
  item: WikidataEntity,
  languages: readonly string[],
  signal: AbortSignal,
): Promise<string | undefined> {
  for (const language of languages) {
    const title = item.sitelinks[`${language}wiki`]?.title;
    if (title === undefined) continue;
    const summary = await wikipedia.summary(language, title, signal);
    if (summary) return summary.extract;
  }
  return undefined;
}

/** `Q123` from a link such as `https://www.wikidata.org/wiki/Q123` among the artist's web sites. */
function wikidataId(urls: readonly string[]): string | undefined {
  for (const url of urls) {
    const match = /^https?:\/\/(?:www\.)?wikidata\.org\/(?:wiki|entity)\/(Q\d+)\/?$/i.exec(url.trim());
    if (match?.[1]) return match[1].toUpperCase();
  }
  return undefined;
}

/** `Special:FilePath` redirects to the file itself; `width` asks for a scaled copy. */
function commonsFileUrl(commonsBaseUrl: string, fileName: string | undefined): string | undefined {
  if (fileName === undefined) return undefined;
  return `${commonsBaseUrl}/wiki/Special:FilePath/${encodeURIComponent(fileName.replaceAll(' ', '_'))}?width=1000`;
}

function pick<T>(byLanguage: Record<string, T>, languages: readonly string[]): T | undefined {
  for (const language of languages) if (Object.hasOwn(byLanguage, language)) return byLanguage[language];
  return undefined;
}

function decodeEntity(raw: unknown, id: string): WikidataAnswer | null {
  const entities = asObject(asObject(raw)?.entities);
  if (!entities) throw new Error('no "entities" object');
  const entity = asObject(entities[id]);
  if (!entity || 'missing' in entity) return null;
  const descriptions: WikidataEntity['descriptions'] = {};
  for (const [language, value] of Object.entries(asObject(entity.descriptions) ?? {})) {
    const text = asText(asObject(value)?.value);
    if (text !== undefined) descriptions[language] = { value: text };
  }
  const sitelinks: WikidataEntity['sitelinks'] = {};
  for (const [site, value] of Object.entries(asObject(entity.sitelinks) ?? {})) {
    const title = asText(asObject(value)?.title);
    if (title !== undefined) sitelinks[site] = { title };
  }
  const images = asList(asObject(entity.claims)?.[IMAGE_PROPERTY]).flatMap((claim) => {
    const value = asText(asObject(asObject(asObject(claim)?.mainsnak)?.datavalue)?.value);
    return value === undefined ? [] : [{ mainsnak: { datavalue: { value } } }];
  });
  const claims: WikidataEntity['claims'] = images.length > 0 ? { P18: images } : {};
  return { entities: { [id]: { id, descriptions, claims, sitelinks } } };
}
