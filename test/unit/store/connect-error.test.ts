import pg from 'pg';
import { ADMIN_URL, describeWithPostgres } from '../../helpers/postgres';
import { describeDatabaseError } from '../../../src/store/postgres/connect-error';

// docs/running.md "PostgreSQL": a database that cannot be used at start is described in words.

test('When PostgreSQL refuses the connection, then the message says nothing accepts connections there, not only ECONNREFUSED', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  expect(describeDatabaseError(refused)).toBe('nothing accepts connections there (is PostgreSQL running, and on that port?) (ECONNREFUSED)');
  // Both addresses of "localhost" refused: Node's AggregateError carries the codes inside.
  const both = Object.assign(new AggregateError([refused, refused], ''), { code: undefined });
  expect(describeDatabaseError(both)).toContain('nothing accepts connections there');
});

test('When the server answers with an SQLSTATE a wrong URL meets, then its meaning comes first, then the server words', () => {
  const missing = Object.assign(new Error('database "radio" does not exist'), { code: '3D000' });
  expect(describeDatabaseError(missing)).toBe('no such database (create it first: createdb, or CREATE DATABASE): database "radio" does not exist');
  expect(describeDatabaseError(new Error('something else'))).toBe('something else');
});

describeWithPostgres('a user PostgreSQL does not have', () => {
  test('When the URL names a role the real server does not have, then the message says no such user, not pg_hba.conf', async () => {
    const url = new URL(ADMIN_URL);
    url.username = `svc_no_such_role_${process.pid}`;
    const client = new pg.Client({ connectionString: url.href });
    const error = await client.connect().then(
      () => null,
      (caught: unknown) => caught,
    );
    await client.end().catch(() => undefined);
    expect(error).not.toBeNull();
    const described = describeDatabaseError(error);
    expect(described).toMatch(
      /^no such user on that server \(create it: createuser NAME, or CREATE ROLE NAME LOGIN; or fix the user in the URL\): role "svc_no_such_role_\d+" does not exist$/,
    );
    expect(described).not.toContain('pg_hba');
  });
});
