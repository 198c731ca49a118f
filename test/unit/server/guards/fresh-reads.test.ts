import { FRESH_ONLY_HEADER, freshReads } from '../../../../src/server/guards/fresh-reads';

// server/guards/fresh-reads.ts (docs/several-instances.md "Fresh reads through nginx"): only a read
// of the current state, marked by the load balancer, asked while the database is out of reach.

describe('fresh reads', () => {
  let databaseOk = false;
  const reads = freshReads(['/v1/last', '/v1/events'], () => databaseOk);
  const marked = { [FRESH_ONLY_HEADER]: '1' };

  beforeEach(() => {
    databaseOk = false;
  });

  it('When a marked GET or HEAD of a current-state path comes while the database is out of reach, then it is refused', () => {
    expect(reads.refuses('GET', '/v1/last', marked)).toBe(true);
    expect(reads.refuses('HEAD', '/v1/last?channel=b', marked)).toBe(true);
    expect(reads.refuses('GET', '/v1/events', marked)).toBe(true);
  });

  it('When the database answers, then nothing is refused', () => {
    databaseOk = true;
    expect(reads.refuses('GET', '/v1/last', marked)).toBe(false);
  });

  it('When the read is not marked, another path, or a write, then it is served (from what the instance knew)', () => {
    expect(reads.refuses('GET', '/v1/last', {})).toBe(false);
    expect(reads.refuses('GET', '/v1/status', marked)).toBe(false);
    expect(reads.refuses('GET', '/v1/lastx', marked)).toBe(false);
    expect(reads.refuses('POST', '/v1/last', marked)).toBe(false);
    expect(reads.refuses(undefined, undefined, marked)).toBe(false);
  });
});
