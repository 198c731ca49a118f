import type { Command } from 'commander';
import { addClientOptions, createClient, type ClientOptions } from '../client-options';
import type { CliContext, SetResult } from '../context';
import { EXIT } from '../exit-codes';

// `svc listeners [--channel] [--since]` (docs/play-log.md "Listeners you can see"): the listener
// sessions from GET /v1/listeners, one line each, and the sessions open now per channel on stderr.

interface ListenersOptions extends ClientOptions {
  channel?: string;
  since?: string;
}

interface SessionLine {
  channel: string;
  mount: string;
  start: string;
  end: string | null;
  seconds: number;
  address: string;
  user_agent: string;
}

export function registerListeners(program: Command, ctx: CliContext, setResult: SetResult): void {
  addClientOptions(
    program.command('listeners').description('list the listener sessions (start, end, duration, channel, mount, agent) and who is connected now'),
    30,
    'sent',
  )
    .option('--channel <name>', 'only this channel')
    .option('--since <time>', 'sessions since this ISO 8601 time (default: the last 24 hours)')
    .action((options: ListenersOptions) => setResult(runListeners(options, ctx)));
}

async function runListeners(options: ListenersOptions, ctx: CliContext): Promise<number> {
  const query = new URLSearchParams();
  if (options.channel !== undefined) query.set('channel', options.channel);
  if (options.since !== undefined) query.set('since', options.since);
  const client = await createClient(options);
  const answer = await client.getJson(`v1/listeners?${query.toString()}`, true);
  if (options.json === true) {
    ctx.io.out(answer.text.trim());
    return EXIT.OK;
  }
  const body = answer.json as { open: Record<string, number>; sessions: SessionLine[]; truncated: boolean };
  for (const s of body.sessions) ctx.io.out(`${s.start}  ${s.end ?? 'connected'}  ${s.seconds}s  ${s.channel}  ${s.mount}  ${s.address}  ${s.user_agent}`);
  ctx.io.err(
    `open now: ${
      Object.entries(body.open)
        .map(([channel, n]) => `${channel} ${n}`)
        .join(', ') || 'none'
    }${body.truncated ? ' (list cut at 1000 sessions)' : ''}`,
  );
  return EXIT.OK;
}
