import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Option, type Command } from 'commander';
import { addClientOptions, createClient, type ClientOptions } from '../client-options';
import type { CliContext, SetResult } from '../context';
import { CliError, EXIT } from '../exit-codes';
import { REPORT_FORMATS } from '../../reports/format';
import { isCalendarDate } from '../../reports/local-time';
import { fileNameOf, ProgressLine } from '../report-files';
import { createInterface } from 'node:readline';
import { runRecount } from './recount';

// `svc report FORMAT` and `svc report check FORMAT` (docs/reports.md; docs/cli.md "`svc report`"):
// the check runs first; with problems nothing is written unless --allow-problems, and then the
// problems go to stderr. The file streams from GET /v1/reports/FORMAT to stdout or --out.

interface ReportOptions extends ClientOptions {
  from: string;
  to: string;
  channel?: string;
  variant?: string;
  programme?: string;
  out?: string;
  allowProblems?: boolean;
  apply?: boolean;
}

const EXAMPLES = `
Examples:
  $ svc report check soundexchange --from 2026-10-01 --to 2026-10-31
  dbid 4711: no ISRC and no label
  $ svc report soundexchange --from 2026-10-01 --to 2026-10-31 --out .
  wrote KSVC20261001-20261031.txt
  $ svc report npr-playlist --from 2026-10-01 --to 2026-10-31 --channel main > playlist.txt
  $ svc report ppl --programme 2026-10-14 --out .
  $ svc report recount --from 2026-10-01 --to 2026-10-31 --apply

FORMAT is one of ${REPORT_FORMATS.join(', ')}. Dates are the station's local dates
(reports.timeZone), both included. The secret is required: these files show listeners.`;

export function registerReport(program: Command, ctx: CliContext, setResult: SetResult): void {
  // `check` is the first argument rather than a subcommand: a subcommand would leave --from
  // and the other options to `report` itself.
  const report = program
    .command('report')
    .description('write a royalty report (SoundExchange, NPR/DS, PPL, PRS, BMI) from the play log, or `report check FORMAT` to list its problems')
    .argument('<format>', `one of ${REPORT_FORMATS.join(', ')}, check, or recount`)
    .argument('[checked]', 'after check: the format to check');
  withReportOptions(report)
    .option('--out <file>', 'write the file here (a directory: the name the format asks for) instead of stdout')
    .option('--allow-problems', 'write the file even when the check finds problems (they are listed on stderr)')
    .option('--apply', 'recount: write the recounted listeners (without it nothing changes)')
    .addHelpText('after', EXAMPLES)
    .action((format: string, checked: string | undefined, options: ReportOptions) => {
      if (format === 'recount')
        setResult(
          checked === undefined ? runRecount(options, ctx) : Promise.reject(new CliError(`unexpected argument ${JSON.stringify(checked)}`, EXIT.USAGE)),
        );
      else if (format === 'check') setResult(runCheck(checked ?? '', options, ctx).then((problems) => (problems > 0 ? EXIT.SERVER_ERROR : EXIT.OK)));
      else if (checked !== undefined) setResult(Promise.reject(new CliError(`unexpected argument ${JSON.stringify(checked)}`, EXIT.USAGE)));
      else setResult(runReport(format, options, ctx));
    });
}

function withReportOptions(command: Command): Command {
  return addClientOptions(command, 300, 'sent')
    .option('--from <date>', 'first local date, YYYY-MM-DD (included)')
    .option('--to <date>', 'last local date, YYYY-MM-DD (included)')
    .option('--channel <name>', 'only this channel (NPR/DS wants one file per stream)')
    .addOption(new Option('--variant <name>', 'soundexchange: csv for the 11-column CSV').choices(['csv']))
    .option('--programme <date>', 'ppl: the programme report rows of this local date');
}

function reportPath(format: string, options: ReportOptions, check: boolean): string {
  if (!(REPORT_FORMATS as readonly string[]).includes(format))
    throw new CliError(`unknown format ${JSON.stringify(format)}; formats: ${REPORT_FORMATS.join(', ')}`, EXIT.USAGE);
  for (const key of ['from', 'to', 'programme'] as const) {
    const value = options[key];
    if (value !== undefined && !isCalendarDate(value))
      throw new CliError(`--${key}: expected a local date YYYY-MM-DD, got ${JSON.stringify(value)}`, EXIT.USAGE);
  }
  if (options.programme === undefined && (options.from === undefined || options.to === undefined))
    throw new CliError('--from and --to are required (local dates YYYY-MM-DD)', EXIT.USAGE);
  const query = new URLSearchParams();
  for (const key of ['from', 'to', 'channel', 'variant', 'programme'] as const) if (options[key] !== undefined) query.set(key, options[key]);
  if (!check) query.set('allow_problems', '1');
  return `v1/reports/${format}${check ? '/check' : ''}?${query.toString()}`;
}

/** Runs the check; problems to stdout (`toStderr`: to stderr), the summary to stderr; answers how many. */
async function runCheck(format: string, options: ReportOptions, ctx: CliContext, toStderr = false): Promise<number> {
  const path = reportPath(format, options, true);
  const client = await createClient(options);
  const response = await client.openStream(path);
  let problems = 0;
  const handle = (line: string) => {
    if (line === '') return;
    const record = JSON.parse(line) as { problem?: string; note?: string; summary?: Record<string, unknown> };
    if (record.note !== undefined) {
      // A note blocks nothing (a cell written neutralised): shown, not counted.
      if (toStderr) ctx.io.err(record.note);
      else ctx.io.out(options.json === true ? line : record.note);
    } else if (record.problem !== undefined) {
      problems++;
      if (toStderr) ctx.io.err(record.problem);
      else ctx.io.out(options.json === true ? line : record.problem);
    } else if (record.summary !== undefined) {
      if (options.json === true && !toStderr) ctx.io.out(line);
      else ctx.io.err(summaryText(record.summary));
    }
  };
  const lines = createInterface({ input: Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), crlfDelay: Infinity });
  for await (const line of lines) handle(line);
  return problems;
}

function summaryText(summary: Record<string, unknown>): string {
  // The streaming log (npr-streams) lists listener sessions, not plays: its summary counts those.
  if (typeof summary.sessions === 'number') return `${String(summary.sessions)} listener sessions reported; ${String(summary.problems)} problem(s)`;
  const left = Object.entries((summary.excluded_not_music ?? {}) as Record<string, number>).map(([kind, n]) => `${n} ${kind}`);
  return `${String(summary.music_plays)} music plays reported; left out: ${left.length > 0 ? left.join(', ') : 'nothing'} that is not music, ${String(summary.excluded_short)} shorter than reports.minSeconds; ${String(summary.problems)} problem(s)`;
}

/** `--out` must name a folder that exists, or a file in one: said before anything is asked or written. */
async function checkOut(out: string | undefined): Promise<void> {
  if (out === undefined) return;
  const folder = out.endsWith('/')
    ? out
    : await stat(out).then(
        (info) => (info.isDirectory() ? out : dirname(out)),
        () => dirname(out),
      );
  const isFolder = await stat(folder).then(
    (info) => info.isDirectory(),
    () => false,
  );
  if (!isFolder) throw new CliError(`--out: the folder ${JSON.stringify(folder)} does not exist; nothing written`, EXIT.USAGE);
}

async function runReport(format: string, options: ReportOptions, ctx: CliContext): Promise<number> {
  reportPath(format, options, true);
  await checkOut(options.out);
  const problems = await runCheck(format, options, ctx, true);
  if (problems > 0 && options.allowProblems !== true)
    throw new CliError(`${problems} problem(s) above; nothing written. Fix them, or write anyway with --allow-problems`, EXIT.SERVER_ERROR);
  const client = await createClient(options);
  const response = await client.openStream(reportPath(format, options, false));
  const body = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
  const progress = new ProgressLine(ctx.io);
  const counting = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      progress.add(chunk.length);
      done(null, chunk);
    },
  });
  try {
    if (options.out === undefined) await pipeline(body, counting, ctx.io.stdout);
    else ctx.io.err(`wrote ${await writeFile(options.out, fileNameOf(response.headers.get('content-disposition')), body, counting)}`);
  } finally {
    progress.end();
  }
  return EXIT.OK;
}

/** Into `out` (a directory: the server's file name inside it), through a partial file renamed at the end. */
async function writeFile(out: string, serverName: string, body: Readable, counting: Transform): Promise<string> {
  const isDirectory = await stat(out).then(
    (info) => info.isDirectory(),
    () => false,
  );
  const target = isDirectory ? join(out, serverName) : out;
  const partial = `${target}.partial`;
  try {
    // 0600: the file holds listeners' addresses and counts (docs/reports.md "Asking for a report");
    // a partial file left by an earlier run is removed first, so the mode is this run's.
    await rm(partial, { force: true });
    await pipeline(body, counting, createWriteStream(partial, { mode: 0o600, flags: 'wx' }));
    await rename(partial, target);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  return target;
}
