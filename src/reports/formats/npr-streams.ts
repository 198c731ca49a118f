import { compactDate, fileSafe, type ReportFacts, type ReportFormat, type ReportInput, type ReportRun } from '../format';
import type { ListenerSession } from '../rows';
import { tabField } from '../text-fields';
import { utcDateAndTime } from './local-stamp';

// NPR Digital Services streaming log (docs/reports-us.md "NPR/DS streaming log"): one line per
// listener session of one stream that began in the period, tab-delimited, no header: address without port,
// date and time tuned in (UTC), stream id (no spaces), seconds listened, HTTP status, player.

/** `203.0.113.9:51234` -> `203.0.113.9`, `[2001:db8::1]:443` -> `2001:db8::1`; a bare IPv6 stays whole. */
export function addressWithoutPort(address: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) return bracketed[1];
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(address);
  return v4 ? v4[1] : address;
}

/** The stream id column: the channel, spaces taken out. */
export const streamId = (channel: string): string => channel.replace(/\s+/g, '');

function line(session: ListenerSession, run: ReportRun): string {
  const connectedMs = Date.parse(session.connected_at);
  const endMs = session.disconnected_at === null ? run.nowMs : Date.parse(session.disconnected_at);
  const [date, time] = utcDateAndTime(connectedMs);
  const seconds = Math.max(0, Math.round((endMs - connectedMs) / 1000));
  const fields = [
    addressWithoutPort(session.address ?? ''),
    date,
    time,
    run.settings.streamId ?? streamId(session.channel),
    String(seconds),
    String(session.status ?? 200),
    tabField(session.user_agent),
  ];
  return `${fields.join('\t')}\n`;
}

async function* render(input: ReportInput, run: ReportRun, facts: ReportFacts): AsyncGenerator<string> {
  const channel = run.channel ?? facts.channels[0];
  for await (const batch of input.sessions()) {
    const lines: string[] = [];
    for (const session of batch) {
      const connectedMs = Date.parse(session.connected_at);
      if (connectedMs < run.range.startMs || connectedMs >= run.range.endMs) continue;
      if (session.channel !== channel) continue;
      lines.push(line(session, run));
    }
    if (lines.length > 0) yield lines.join('');
  }
}

export const nprStreams: ReportFormat = {
  name: 'npr-streams',
  contentType: () => 'text/tab-separated-values; charset=utf-8',
  needsPerformances: () => false,
  gathersBeforeWriting: () => false,
  asciiNames: [],
  fileName(run, facts) {
    return fileSafe(
      `${run.settings.service}-${run.channel ?? facts.channels[0] ?? 'main'}-streams-${compactDate(run.range.from)}-${compactDate(run.range.to)}.txt`,
    );
  },
  render,
};
