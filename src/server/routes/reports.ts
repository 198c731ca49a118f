import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import Router from '@koa/router';
import { AppError } from '../../errors';
import { isStorageUnavailable } from '../../store/health';
import { problemLine, type Problem } from '../../reports/checks';
import type { ReportFacts, ReportRun, ReportSettings } from '../../reports/format';
import { FORMATS } from '../../reports/formats';
import { isReportFormat, reportRun, type ReportParameters } from '../../reports/report-query';
import { inspectReport, prepareReport, type OpenReportSource, type ReportDeps, type ReportSnapshotSource } from '../../reports/run-report';
import { slicedSource } from '../../reports/slices';
import type { AppContext, AppState } from '../context';
import { requireSecret } from '../middleware/require-secret';
import { requestGone } from '../guards/work-pool';

// GET /v1/reports/<format> and GET /v1/reports/<format>/check (docs/reports.md "Over HTTP"): the
// files show listeners' addresses and counts, so the shared secret is required even for a read,
// and no secret configured means no reports. The cross-site and navigation guards
// (middleware/guards.ts, isPrivateRead) run before these handlers.

export interface ReportRoutesDeps {
  secret: string;
  settings: ReportSettings;
  /** Each report reads one snapshot of the log (docs/reports.md "One snapshot"), released once it is answered. */
  openSource: OpenReportSource;
  minSessionSeconds: number;
  now?: () => number;
}

/** Problems shown in a refusal; `check` lists them all. */
const REFUSAL_PROBLEMS = 20;

const PARAMETERS = new Set(['from', 'to', 'channel', 'variant', 'programme', 'allow_problems', 'secret']);

export function reportRoutes(deps: ReportRoutesDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });
  const now = deps.now ?? Date.now;

  // No secret configured means no reports, not open ones.
  const secret = requireSecret(deps.secret, {
    unsetMessage:
      "Reports need the shared secret, and the server has none: set secret in the server's config (or start it with --secret or SVC_SECRET), then restart it",
  });

  const check = (ctx: AppContext, name: string): ReportRun => {
    if (!isReportFormat(name)) throw new AppError('NOT_FOUND', `No report format '${name.slice(0, 40)}'; formats: ${Object.keys(FORMATS).join(', ')}`);
    const run = reportRun(name, parameters(ctx), deps.settings, now());
    ctx.set('Cache-Control', 'no-store');
    return run;
  };
  const storage = (error: unknown): never => {
    // A lost database is a 503 like any read's; the file is written whole before its first
    // byte is sent, so a failure is a status, never a cut body under the society's name.
    throw isStorageUnavailable(error) ? new AppError('DATABASE_UNAVAILABLE', undefined, { cause: error }) : error;
  };
  /** The run's snapshot, read in slices: the loop is handed back after every page (reports/slices.ts). */
  const open = async (run: ReportRun): Promise<{ snapshot: ReportSnapshotSource; reportDeps: ReportDeps }> => {
    const snapshot = await deps.openSource({ startMs: run.range.startMs, endMs: run.range.endMs, channel: run.channel }).catch(storage);
    const reportDeps: ReportDeps = { source: slicedSource(snapshot.source), format: FORMATS[run.format], minSessionSeconds: deps.minSessionSeconds };
    return { snapshot, reportDeps };
  };

  router.get('/reports/:format/check', secret, async (ctx) => {
    const run = check(ctx, ctx.params.format ?? '');
    const { snapshot, reportDeps } = await open(run);
    ctx.type = 'application/x-ndjson';
    ctx.body = checkLines(reportDeps, run, snapshot);
  });

  router.get('/reports/:format', secret, async (ctx) => {
    const run = check(ctx, ctx.params.format ?? '');
    const { snapshot, reportDeps } = await open(run);
    let file: Spooled | undefined;
    const shown: string[] = [];
    let facts: ReportFacts;
    try {
      const prepared = await prepareReport(reportDeps, run, (problem: Problem) => {
        if (!problem.note && shown.length < REFUSAL_PROBLEMS) shown.push(problemLine(problem));
      }).catch(storage);
      facts = prepared.facts;
      if (facts.problems > 0 && !flag(ctx.query.allow_problems)) {
        ctx.status = 422;
        ctx.body = {
          error: `The report has ${facts.problems} problem${facts.problems === 1 ? '' : 's'}: fix them, or ask again with allow_problems=1`,
          problems: shown,
        };
        return;
      }
      const gone = requestGone(ctx.res);
      file = await spooled(prepared.body, () => gone.aborted).catch(storage);
    } finally {
      await snapshot.release();
    }
    const fileName = reportDeps.format.fileName(run, facts);
    ctx.set({
      'Content-Disposition': contentDisposition(fileName),
      'X-Report-Problems': String(facts.problems),
      'X-Report-Summary': asciiJson(summaryOf(facts)),
    });
    ctx.type = reportDeps.format.contentType(run);
    ctx.length = file.size;
    const stream = createReadStream(file.path);
    stream.once('close', () => void rm(file.dir, { recursive: true, force: true }));
    ctx.body = stream;
  });

  return router;
}

interface Spooled {
  dir: string;
  path: string;
  size: number;
}

/**
 * The whole file into a private temporary file (0600, in a 0700 folder), so that it is answered
 * with its Content-Length: a client whose connection is cut sees a short body, never a
 * complete-looking file (docs/reports.md "Over HTTP"). Stops when the reader has gone.
 */
async function spooled(body: AsyncIterable<string> | Iterable<string>, gone: () => boolean): Promise<Spooled> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-report-'));
  const path = join(dir, 'report');
  let size = 0;
  try {
    const handle = await open(path, 'wx', 0o600);
    try {
      for await (const piece of body) {
        if (gone()) throw new Error('the reader of the report went away');
        const bytes = Buffer.from(piece, 'utf8');
        await handle.write(bytes);
        size += bytes.length;
      }
    } finally {
      await handle.close();
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return { dir, path, size };
}

/**
 * The check as NDJSON: one `{"problem": ...}` line each, then `{"summary": ...}`. The pass waits
 * while the reader is behind, and stops when it goes away.
 */
function checkLines(deps: ReportDeps, run: ReportRun, snapshot: ReportSnapshotSource): Readable {
  const out = new PassThrough();
  const send = async (problem: Problem) => {
    if (out.destroyed) throw new Error('the reader of the check went away');
    const line = problem.note ? { note: problemLine(problem) } : { problem: problemLine(problem) };
    if (out.write(`${JSON.stringify(line)}\n`)) return;
    await new Promise<void>((resolve) => {
      out.once('drain', resolve);
      out.once('close', resolve);
    });
  };
  inspectReport(deps, run, send)
    .finally(() => snapshot.release())
    .then(
      (facts) => out.end(`${JSON.stringify({ summary: summaryOf(facts) })}\n`),
      (error: unknown) => out.destroy(error instanceof Error ? error : new Error('report check failed')),
    );
  return out;
}

/** What a run left out and found, as the check's last line and a header of the file's answer. */
export function summaryOf(facts: ReportFacts): Record<string, unknown> {
  return {
    music_plays: facts.musicPlays,
    excluded_not_music: facts.excludedKinds,
    excluded_short: facts.excludedShort,
    channels: facts.channels,
    problems: facts.problems,
    notes: facts.notes,
    ...(facts.sessions === undefined ? {} : { sessions: facts.sessions }),
  };
}

/** JSON a header can carry: every character past ASCII escaped (a channel may be named in any script). */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function parameters(ctx: AppContext): ReportParameters {
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(ctx.query)) {
    if (!PARAMETERS.has(key)) throw new AppError('INVALID_PARAMETERS', `Unknown parameter '${key.slice(0, 40)}'`);
    if (Array.isArray(value)) throw new AppError('INVALID_PARAMETERS', `Repeated parameter '${key}'`);
    if (value !== undefined) values[key] = value;
  }
  return { from: values.from, to: values.to, channel: values.channel, variant: values.variant, programme: values.programme };
}

function flag(value: string | string[] | undefined): boolean {
  return value === '1' || value === 'true';
}

/** `attachment` with an ASCII name for old clients and the exact name in RFC 8187 form. */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}
