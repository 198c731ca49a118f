import { InvalidArgumentError, type Command } from 'commander';
import type { SvcClient } from '../client';
import { addClientOptions, createClient, type ClientOptions } from '../client-options';
import type { CliContext, SetResult } from '../context';
import { CliError, EXIT, mostSevere, type ExitCode } from '../exit-codes';
import { isPlainObject } from '../../domain/plain-object';
import { chooseTrackStyle, humanTrackLine, jsonLine, type Painter } from '../output';
import { readSubmissions, readTemplatedLines } from '../submission-input';
import { compileLineParser, type LineParser } from '../line-parser';
import { TemplateError, unknownFieldsWarning } from '../../domain/template';
import { oneLine } from '../../domain/template';

// `svc submit`: POST /v1/remoteinput from flags, or from JSON / NDJSON on stdin (`-`).

interface SubmitOptions extends ClientOptions {
  artist?: string;
  title?: string;
  album?: string;
  field?: Record<string, string>;
  parse?: string;
}

const EXAMPLES = `
Examples:
  $ svc submit --artist 'Daft Punk' --title 'One More Time' --album Discovery
  #1 Daft Punk - One More Time (Discovery)
  $ svc submit --artist Moderat --title 'A New Error' --field bpm=122 --field deck=2 --json
  $ echo '{"artist":"Burial","title":"Archangel"}' | svc submit -
  $ svc submit - < tracks.ndjson        # one submission per line
  $ playerctl metadata --follow --format '{{artist}}\t{{title}}' | svc submit - --parse '{{artist}}\t{{title}}'

With -, each non-blank stdin line is one JSON object (NDJSON); a single pretty-printed object
works too. With --parse, each line is read with the template instead (the inverse of
--format): literal text must match, each {{field}} takes the text up to the next literal, and \t
is a tab. Fields given as options are added to every line. One result line per submitted
line; a bad line is reported on stderr as "line N: ..." and the rest still goes in. The exit
code is the most severe failure: 4 unreachable > 3 auth refused > 1 server error > 5 input
rejected > 0.`;

export function registerSubmit(program: Command, ctx: CliContext, setResult: SetResult): void {
  const command = program
    .command('submit')
    .description('submit a track to /v1/remoteinput and print the processed result')
    .argument('[input]', '"-" to read a JSON object or NDJSON (one submission per line) from stdin')
    .option('--artist <artist>', 'artist name')
    .option('--title <title>', 'track title')
    .option('--album <album>', 'album name')
    .option('--field <key=value>', 'any other field, e.g. --field bpm=128 (repeatable)', collectField)
    .option('--parse <template>', 'with -: read each stdin line with a template such as "{{artist}}\\t{{title}}" (\\t is a tab) instead of JSON');
  addClientOptions(command, 40, 'sent')
    .addHelpText('after', EXAMPLES)
    .action((input: string | undefined, options: SubmitOptions) => setResult(runSubmit(input, options, ctx)));
}

function collectField(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const equals = value.indexOf('=');
  const key = equals === -1 ? '' : value.slice(0, equals).trim();
  if (key === '') throw new InvalidArgumentError(`expected key=value, got ${JSON.stringify(value)}.`);
  return { ...previous, [key]: value.slice(equals + 1) };
}

async function runSubmit(input: string | undefined, options: SubmitOptions, ctx: CliContext): Promise<number> {
  if (input !== undefined && input !== '-') {
    throw new CliError(`unexpected argument ${JSON.stringify(input)}: use - to read from stdin, or --field key=value`, EXIT.USAGE);
  }
  if (options.parse !== undefined && input !== '-') throw new CliError('--parse reads stdin: give - as well (svc submit - --parse TEMPLATE)', EXIT.USAGE);
  const flagFields: Record<string, string> = { ...options.field };
  for (const key of ['artist', 'title', 'album'] as const) {
    const value = options[key];
    if (value !== undefined) flagFields[key] = value;
  }
  if (input === undefined && Object.keys(flagFields).length === 0) {
    throw new CliError('nothing to submit: give --artist, --title, --album or --field key=value, or - to read JSON from stdin', EXIT.USAGE);
  }
  const lineParser = options.parse === undefined ? undefined : parserFor(options.parse, ctx);
  const style = chooseTrackStyle({ json: options.json }, ctx.io);
  const paint = style.kind === 'human' ? style.paint : undefined;
  const client = await createClient(options);

  if (input === undefined) {
    const result = await submit(client, flagFields, ctx);
    report(result, ctx, paint, 'svc: ');
    return EXIT.OK;
  }

  if (ctx.io.stdinIsTTY)
    ctx.io.err(`svc: reading ${lineParser ? 'lines' : 'JSON'} from the terminal, one ${lineParser ? 'track' : 'object'} per line; end with Ctrl-D`);
  let exitCode: ExitCode = EXIT.OK;
  const items = lineParser ? readTemplatedLines(ctx.io.stdinLines(), lineParser) : readSubmissions(ctx.io.stdinLines());
  for await (const item of items) {
    const prefix = `svc: line ${item.line}: `;
    if ('error' in item) {
      ctx.io.err(prefix + item.error);
      exitCode = mostSevere(exitCode, EXIT.INPUT_REJECTED);
      continue;
    }
    try {
      report(await submit(client, { ...item.fields, ...flagFields }, ctx), ctx, paint, prefix);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      ctx.io.err(prefix + error.message);
      exitCode = mostSevere(exitCode, error.exitCode);
    }
  }
  return exitCode;
}

function parserFor(template: string, ctx: CliContext): LineParser {
  try {
    const parser = compileLineParser(template);
    // `{{titel}}` would store a field titel and no title: said before anything is sent.
    const warning = unknownFieldsWarning(template);
    if (warning !== null) ctx.io.err(`svc: warning: --parse: ${warning}`);
    return parser;
  } catch (error) {
    if (error instanceof TemplateError) throw new CliError(`--parse: ${error.message}`, EXIT.USAGE);
    throw error;
  }
}

interface Submitted {
  /** The server's response, exactly as parsed. */
  response: Record<string, unknown>;
  dbid: number;
  metadata: Record<string, unknown>;
  warnings: string[];
}

async function submit(client: SvcClient, fields: Record<string, unknown>, ctx: CliContext): Promise<Submitted> {
  // A person at a terminal hears once why nothing happens yet; a script's stderr stays quiet.
  let told = !ctx.io.stderrIsTTY;
  const onRetry = (error: CliError, giveUpAt: number) => {
    if (told) return;
    told = true;
    ctx.io.err(`svc: trying again for up to ${Math.ceil((giveUpAt - Date.now()) / 1000)} s (--timeout): ${error.message}`);
  };
  const { json } = await client.postJsonOnce('v1/remoteinput', fields, onRetry);
  if (!isPlainObject(json) || typeof json.dbid !== 'number' || !isPlainObject(json.processed_metadata)) {
    throw new CliError(`unexpected answer from ${client.endpoint('v1/remoteinput').href}: no dbid and processed_metadata`, EXIT.SERVER_ERROR);
  }
  const warnings = Array.isArray(json.warnings) ? json.warnings.filter((w): w is string => typeof w === 'string') : [];
  return { response: json, dbid: json.dbid, metadata: json.processed_metadata, warnings };
}

/** One result line on stdout; warnings on stderr. */
function report(result: Submitted, ctx: CliContext, paint: Painter | undefined, prefix: string): void {
  for (const warning of result.warnings) ctx.io.err(`${prefix}warning: ${oneLine(warning)}`);
  if (!paint) ctx.io.out(jsonLine(result.response));
  else ctx.io.out(`${paint.faint(`#${result.dbid}`)} ${humanTrackLine(result.metadata, paint)}`);
}
