import { AppError } from '../../../src/errors';
import { authenticate, secretMatches } from '../../../src/pipeline/authenticate';
import { parseSubmission as parseWithLimits, type RawRequest } from '../../../src/pipeline/parse';

const MAX_FIELDS = 200;
const parseSubmission = (request: RawRequest) => parseWithLimits(request, { maxFields: MAX_FIELDS });

function raw(overrides: Partial<RawRequest>): RawRequest {
  return { method: 'GET', query: {}, authHeader: '', ...overrides };
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
  return undefined;
}

describe('parseSubmission', () => {
  it('When GET, then the query parameters are the fields', () => {
    expect(parseSubmission(raw({ query: { artist: 'A', title: 'T' } })).fields).toEqual({ artist: 'A', title: 'T' });
  });

  it('When a query key is repeated, then it is a 400 naming the key', () => {
    expect(() => parseSubmission(raw({ query: { artist: ['A', 'B'] } }))).toThrow("Repeated query parameter 'artist'");
  });

  it('When a form key is repeated, then it is a 400', () => {
    expect(codeOf(() => parseSubmission(raw({ method: 'POST', body: { artist: ['A', 'B'] }, bodyIsForm: true })))).toBe('INVALID_PARAMETERS');
  });

  it.each([[[1]], ['text'], [3], [null], [''], [undefined]])('When a POST body is %p, then it is a 400', (body) => {
    expect(codeOf(() => parseSubmission(raw({ method: 'POST', body })))).toBe('BODY_NOT_OBJECT');
  });

  it('When an auth header is present, then it decides alone', () => {
    const parsed = parseSubmission(raw({ method: 'POST', body: { secret: 'b' }, query: { secret: 'q' }, authHeader: 'h' }));
    expect(parsed.credential).toEqual({ bytes: Buffer.from('h') });
  });

  it('When there is no header, then the body secret comes before the query secret', () => {
    const parsed = parseSubmission(raw({ method: 'POST', body: { secret: 'b' }, query: { secret: 'q' } }));
    expect(parsed.credential).toEqual({ bytes: Buffer.from('b') });
  });

  it('When only the query carries a secret, then it is used for any method', () => {
    expect(parseSubmission(raw({ method: 'POST', body: {}, query: { secret: 'q' } })).credential).toEqual({ bytes: Buffer.from('q') });
    expect(parseSubmission(raw({ query: { secret: 'q' } })).credential).toEqual({ bytes: Buffer.from('q') });
  });

  it('When no carrier holds a secret, then there is no credential', () => {
    expect(parseSubmission(raw({ query: { secret: '' } })).credential).toBeNull();
  });

  it('When the body secret is nested 100,000 levels deep, then it is a credential that never matches, not a stack overflow', () => {
    let secret: unknown = 's3cret';
    for (let depth = 0; depth < 100_000; depth += 1) secret = [secret];
    const parsed = parseSubmission(raw({ method: 'POST', body: { artist: 'A', secret } }));
    expect(parsed.credential).toEqual({ bytes: null });
    expect(codeOf(() => authenticate(parsed.credential, 's3cret'))).toBe('INVALID_SECRET');
  });

  it('When a submission has more fields than limits.maxFields, then 400 names the count and the limit', () => {
    const fields = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, 'x']));
    expect(Object.keys(parseSubmission(raw({ method: 'POST', body: fields(MAX_FIELDS) })).fields)).toHaveLength(MAX_FIELDS);
    expect(() => parseSubmission(raw({ method: 'POST', body: fields(MAX_FIELDS + 1) }))).toThrow(`Too many fields (${MAX_FIELDS + 1}, limit ${MAX_FIELDS})`);
    expect(codeOf(() => parseSubmission(raw({ query: fields(MAX_FIELDS + 5) })))).toBe('TOO_MANY_FIELDS');
  });
});

describe('authenticate', () => {
  const credential = (value: string) => ({ bytes: Buffer.from(value, 'utf8') });

  it('When no secret is configured, then anything passes', () => {
    expect(codeOf(() => authenticate(null, ''))).toBeUndefined();
    expect(codeOf(() => authenticate(credential('whatever'), ''))).toBeUndefined();
  });

  it('When a secret is configured, then missing and wrong secrets are told apart', () => {
    expect(codeOf(() => authenticate(null, 's3cret'))).toBe('MISSING_SECRET');
    expect(codeOf(() => authenticate(credential('nope'), 's3cret'))).toBe('INVALID_SECRET');
    expect(codeOf(() => authenticate(credential('s3cret'), 's3cret'))).toBeUndefined();
  });

  it('When the secret is not ASCII, then its UTF-8 bytes are compared (a header arrives as latin1 bytes)', () => {
    const secret = 'pässwörd-🎧';
    const headerAsNodeSeesIt = Buffer.from(secret, 'utf8').toString('latin1');
    expect(codeOf(() => authenticate({ bytes: Buffer.from(headerAsNodeSeesIt, 'latin1') }, secret))).toBeUndefined();
    expect(secretMatches(Buffer.from('passwort'), Buffer.from(secret))).toBe(false);
  });

  it('When lengths differ, then the comparison still answers (no throw from timingSafeEqual)', () => {
    expect(secretMatches(Buffer.from('a'), Buffer.from('a much longer secret'))).toBe(false);
  });
});
