// What svc takes for an http(s) URL: read as text (a configured base URL, a provider's image
// link, a redirect location) or once parsed (a cover to fetch, the CLI's server). Pure; imports
// nothing.

const HTTP_URL = /^https?:\/\/\S+$/i;

/** `http://` or `https://` (either case) followed by something, with no whitespace anywhere. */
export function isHttpUrl(text: string): boolean {
  return HTTP_URL.test(text);
}

/** A parsed URL whose scheme is http or https (the URL parser has lower-cased it). */
export function hasHttpScheme(url: URL): boolean {
  return url.protocol === 'http:' || url.protocol === 'https:';
}
