import { asObject, asText } from './json-read';
import { lookupJson, type ServiceDeps } from './service-deps';

// Wikipedia's REST page summary (`/api/rest_v1/page/summary/{title}`): the lead of an article as
// plain text, used as the artist's long biography.

const SERVICE = 'wikipedia';

export interface WikipediaSummary {
  title: string;
  extract: string;
}

export class WikipediaClient {
  constructor(
    private readonly deps: ServiceDeps,
    /** With `{lang}` where the language goes, e.g. `https://{lang}.wikipedia.org`. */
    private readonly baseUrl: string,
  ) {}

  summary(language: string, title: string, signal: AbortSignal): Promise<WikipediaSummary | null> {
    const path = `api/rest_v1/page/summary/${encodeURIComponent(title.replaceAll(' ', '_'))}`;
    const url = `${this.baseUrl.replaceAll('{lang}', language)}/${path}`;
    return lookupJson(this.deps, { service: SERVICE, key: `${language}/${path}`, url, decode: decodeSummary }, signal);
  }
}

/** A disambiguation page or an empty extract is no biography ("not found"). */
function decodeSummary(value: unknown): WikipediaSummary | null {
  const body = asObject(value);
  if (!body) throw new Error('not a page summary');
  const type = asText(body.type);
  const extract = asText(body.extract);
  const title = asText(body.title);
  if (type === 'disambiguation' || extract === undefined || title === undefined) return null;
  return { title, extract };
}
