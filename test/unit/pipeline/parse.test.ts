import { authenticate } from '../../../src/pipeline/authenticate';
import { parseSubmission as parseWithLimits, type RawRequest } from '../../../src/pipeline/parse';
import { codeOf } from '../../helpers/app-error-code';

const MAX_FIELDS = 200;
const parseSubmission = (request: RawRequest) => parseWithLimits(request, { maxFields: MAX_FIELDS });

function raw(overrides: Partial<RawRequest>): RawRequest {
  return { method: 'GET', query: {}, authHeader: '', ...overrides };
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
