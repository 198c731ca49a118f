import path from 'node:path';
import type { Command } from 'commander';
import type { CliContext, SetResult } from '../context';
import { CliError, EXIT } from '../exit-codes';

// `svc backup [--out FILE]` and `svc restore FILE` (docs/running.md "Backup"): the SQLite
// database the config names, copied online with SQLite's backup API; PostgreSQL uses pg_dump.

interface BackupOptions {
  out?: string;
  db?: string;
  config?: string;
}

const PG_DUMP = "(umask 077 && pg_dump --format=custom --file=svc-$(date +%F).dump 'postgres://...')";

export function registerBackup(program: Command, ctx: CliContext, setResult: SetResult): void {
  program
    .command('backup')
    .description('copy the SQLite database while svc runs (0600, checked with integrity_check)')
    .option('-o, --out <file>', 'where the copy goes (default: backups/svc-<time>.db beside the database, in a 0700 folder)')
    .option('--db <file>', "the database file (default: the config's database, env SVC_DATABASE)")
    .option('-c, --config <file>', 'load this config file instead of searching for one')
    .addHelpText('after', '\nExamples:\n  $ svc backup\n  $ svc backup --out /srv/backups/svc-$(date +%F).db')
    .action((options: BackupOptions) => setResult(backup(options, ctx)));
  program
    .command('restore <file>')
    .description('replace the database with a backup (stop svc serve first: refused while it runs)')
    .option('--db <file>', "the database file (default: the config's database, env SVC_DATABASE)")
    .option('-c, --config <file>', 'load this config file instead of searching for one')
    .addHelpText('after', '\nExamples:\n  $ systemctl stop svc && svc restore /var/lib/svc/backups/svc-2026-12-02T04-00-00Z.db && systemctl start svc')
    .action((file: string, options: BackupOptions) => setResult(restore(file, options, ctx)));
}

/** The SQLite file the config names; PostgreSQL and :memory: are refused with what to do instead. */
async function databaseFile(options: BackupOptions): Promise<string> {
  const { loadConfig } = require('../../config/load') as typeof import('../../config/load');
  const { config } = await loadConfig({ configFile: options.config, flags: { 'database.location': options.db } });
  const location = config.database.location;
  if (/^postgres(ql)?:\/\//i.test(location)) {
    throw new CliError(`the database is PostgreSQL: back it up with pg_dump, e.g. ${PG_DUMP} (docs/running.md "PostgreSQL")`, EXIT.USAGE);
  }
  if (location === ':memory:') throw new CliError('the database is :memory:, gone when svc stops: there is nothing to back up', EXIT.USAGE);
  return path.resolve(location);
}

async function backup(options: BackupOptions, ctx: CliContext): Promise<number> {
  const database = await databaseFile(options);
  const { backupSqlite } = require('../../store/sqlite/backup') as typeof import('../../store/sqlite/backup');
  const stamp = new Date()
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-');
  const out = path.resolve(options.out ?? path.join(path.dirname(database), 'backups', `svc-${stamp}.db`));
  const report = await backupSqlite(database, out);
  ctx.io.out(`backup written: ${report.file} (integrity ok, ${report.tracks} tracks, schema ${report.schemaVersion})`);
  return EXIT.OK;
}

async function restore(file: string, options: BackupOptions, ctx: CliContext): Promise<number> {
  const database = await databaseFile(options);
  const { restoreSqlite } = require('../../store/sqlite/backup') as typeof import('../../store/sqlite/backup');
  const report = await restoreSqlite(path.resolve(file), database);
  ctx.io.out(`restored: ${report.file} from ${path.resolve(file)} (integrity ok, ${report.tracks} tracks, schema ${report.schemaVersion})`);
  return EXIT.OK;
}
