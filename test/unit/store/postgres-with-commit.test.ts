import pg from 'pg';
import { inTransaction, withCommit } from '../../../src/store/postgres/connection';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../helpers/postgres';

// withCommit (src/store/postgres/connection.ts) writes its values into the statement as literals so
// that the COMMIT rides in the same message. On a real PostgreSQL, every value must reach the row
// exactly as a bound parameter would: quotes, backslashes, placeholders and comment markers inside
// strings, and numbers next to an operator.

const HOSTILE_TEXT = [
  '',
  "it's",
  "''",
  'back\\slash',
  "\\'",
  "E'x'",
  '$1',
  '$2 and $10',
  '-- not a comment',
  '/* nor this */',
  "'); DROP TABLE sample; --",
  '{"a":"b\\"c"}',
  'snow \u2603, emoji \u{1F3B5}, RTL \u202e',
  'line\nbreak\ttab',
];
const NUMBERS = [0, 1, -1, -5, 2 ** 53 - 1, -(2 ** 53 - 1), 1_796_230_973_855];
const FRACTIONS = [0.1, -1.5, 1e-7, -2.5e-8, 123.456];

describeWithPostgres('withCommit: literals as safe as bound parameters', () => {
  let database: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    await pool.query('CREATE TABLE sample (id serial PRIMARY KEY, words text, amount bigint, doc json, difference bigint, ratio double precision)');
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  const insertWithCommit = (values: (string | number | null)[]) =>
    inTransaction(
      pool,
      (client) =>
        withCommit<{ id: number }>(
          client,
          'INSERT INTO sample (words, amount, doc, difference, ratio) SELECT $1, $2::bigint, $3::json, 100-$2::bigint, 1-$4::double precision RETURNING id',
          values,
        ),
      () => [],
      { commitsItself: true },
    );

  it('When hostile strings and numbers go through withCommit, then the stored row equals the one a parameterised insert stores', async () => {
    for (const words of HOSTILE_TEXT) {
      for (const [index, amount] of NUMBERS.entries()) {
        const doc = JSON.stringify({ words, amount });
        const ratio = FRACTIONS[index % FRACTIONS.length] ?? 0;
        const viaLiterals = (await insertWithCommit([words, amount, doc, ratio])).rows[0]?.id;
        const viaParameters = (
          await pool.query<{ id: number }>(
            'INSERT INTO sample (words, amount, doc, difference, ratio) SELECT $1, $2::bigint, $3::json, 100-$2::bigint, 1-$4::double precision RETURNING id',
            [words, amount, doc, ratio],
          )
        ).rows[0]?.id;
        const rows = await pool.query('SELECT words, amount, doc::text AS doc, difference, ratio FROM sample WHERE id = ANY($1) ORDER BY id', [
          [viaLiterals, viaParameters],
        ]);
        expect(rows.rows).toHaveLength(2);
        expect(rows.rows[0]).toEqual(rows.rows[1]);
        expect(rows.rows[0]).toEqual({ words, amount: String(amount), doc, difference: String(100n - BigInt(amount)), ratio: 1 - ratio });
      }
    }
    expect(Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM sample')).rows[0]?.n)).toBe(HOSTILE_TEXT.length * NUMBERS.length * 2);
  });

  it('When a value is null, then it is stored as NULL; a value that is no finite number, or a missing one, is refused before anything is sent', async () => {
    const id = (await insertWithCommit([null, null, null, null])).rows[0]?.id;
    expect((await pool.query('SELECT words, amount, doc FROM sample WHERE id = $1', [id])).rows[0]).toEqual({ words: null, amount: null, doc: null });
    await expect(insertWithCommit(['x', Number.NaN, '{}', 0])).rejects.toThrow('not a finite number');
    await expect(insertWithCommit(['x', 1, '{}'])).rejects.toThrow('no value for $4');
  });
});
