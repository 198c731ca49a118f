import type pg from 'pg';

// The PostgreSQL side of Store.probeWrite: a session that is read-only (a hot standby, or
// default_transaction_read_only set on the database or role) would refuse every INSERT with
// SQLSTATE 25006, read_only_sql_transaction
// (https://www.postgresql.org/docs/15/errcodes-appendix.html). Asking costs no write.

export async function probePostgresWrite(pool: pg.Pool): Promise<void> {
  const result = await pool.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
  if (result.rows[0]?.transaction_read_only === 'on') {
    throw Object.assign(new Error('the database session is read-only (transaction_read_only = on)'), { code: '25006' });
  }
}
