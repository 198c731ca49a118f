import { parseIsoDateTime } from '../../../src/domain/iso-time';

describe('parseIsoDateTime', () => {
  it.each([
    ['2026-11-22', '2026-11-22T00:00:00.000Z'],
    ['2026-11-22T20:00Z', '2026-11-22T20:00:00.000Z'],
    ['2026-11-22T20:00:01.5+01:30', '2026-11-22T18:30:01.500Z'],
    ['2026-11-22t20:00:00z', '2026-11-22T20:00:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
  ])('When it reads %s in UTC, then it is %s', (value, iso) => {
    expect(parseIsoDateTime(value, 'utc')).toBe(iso);
  });

  it.each([
    '2026-02-29',
    '2026-11-31T00:00Z',
    '2026-11-22T24:00Z',
    '2026-11-22T20:60Z',
    '0099-01-01',
    '2026-11-22T20:00+25:00',
    '9999-12-31T23:00-05:00',
    '2026-11-22 20:00',
    'now',
  ])('When it reads %j, then it is refused', (value) => {
    expect(parseIsoDateTime(value, 'utc')).toBeUndefined();
  });
});
