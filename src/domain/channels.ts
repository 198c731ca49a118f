import { DEFAULT_CHANNEL } from './play';

// Declared channels (docs/channels.md): one identity from the studio to the report. Pure rules:
// which channel a submission, a listener mount or a pulled stream belongs to, whose listeners
// count for it, and what its report rows say. Without declarations, today's rules hold: a
// submission names its channel (else "main") and a listener mount is its own channel.

export interface ChannelDeclaration {
  readonly name: string;
  readonly ingest: { readonly mounts: readonly string[]; readonly streams: readonly string[]; readonly aliases: readonly string[] };
  readonly audience: readonly { readonly url: string; readonly mounts: readonly string[] }[];
  readonly report: { readonly service: string; readonly category: string; readonly streamId: string; readonly timeZone: string };
}

/** An audience Icecast server as the listener sessions count it (`playlog.icecast[]` with the channels' mounts added). */
export interface AudienceServer {
  readonly url: string;
  readonly adminUser: string;
  readonly adminPassword?: string;
  readonly poll?: number;
  readonly mounts: Readonly<Record<string, string>>;
}

export interface ChannelChoice {
  channel: string;
  /** Set when channels are declared and the given name is none of theirs (never a silent new channel). */
  warning?: string;
}

export interface ChannelRules {
  /** Whether the config declares channels. */
  readonly declared: boolean;
  /** The channel the surfaces without `?channel=` show when channels are declared: the first one. */
  readonly defaultChannel: string;
  /** The declared names, in order (empty without declarations). */
  readonly names: readonly string[];
  /** The channel of a submission's `channel` field, a listener mount or a pulled stream URL. */
  resolve(given: string | undefined): ChannelChoice;
  /** Whether `name` is a declared channel (always true without declarations). */
  isDeclared(name: string): boolean;
  declaration(name: string): ChannelDeclaration | undefined;
}

/** A declaration as the config file gives it: the config is validated strictly, so a list item's omitted keys stay omitted. */
export interface ChannelInput {
  readonly name: string;
  readonly ingest?: { readonly mounts?: readonly string[]; readonly streams?: readonly string[]; readonly aliases?: readonly string[] };
  readonly audience?: readonly { readonly url: string; readonly mounts: readonly string[] }[];
  readonly report?: { readonly service?: string; readonly category?: string; readonly streamId?: string; readonly timeZone?: string };
}

/** Every key of each declaration, an omitted one empty. */
export function completeChannels(inputs: readonly ChannelInput[]): ChannelDeclaration[] {
  return inputs.map((input) => ({
    name: input.name,
    ingest: { mounts: input.ingest?.mounts ?? [], streams: input.ingest?.streams ?? [], aliases: input.ingest?.aliases ?? [] },
    audience: input.audience ?? [],
    report: {
      service: input.report?.service ?? '',
      category: input.report?.category ?? '',
      streamId: input.report?.streamId ?? '',
      timeZone: input.report?.timeZone ?? '',
    },
  }));
}

export function channelRules(inputs: readonly ChannelInput[]): ChannelRules {
  const declarations = completeChannels(inputs);
  const owner = new Map<string, string>();
  for (const channel of declarations) {
    for (const claim of [channel.name, ...channel.ingest.aliases, ...channel.ingest.mounts, ...channel.ingest.streams]) owner.set(claim, channel.name);
  }
  const names = declarations.map((channel) => channel.name);
  const declared = declarations.length > 0;
  const defaultChannel = names[0] ?? DEFAULT_CHANNEL;
  return {
    declared,
    defaultChannel,
    names,
    resolve(given) {
      if (given === undefined || given === '') return { channel: defaultChannel };
      if (!declared) return { channel: given };
      const found = owner.get(given);
      if (found !== undefined) return { channel: found };
      // Kept apart under its own name, so it never ends or trims a declared channel's play; the
      // answer, the log and the report check name it.
      return {
        channel: given,
        warning: `channel ${JSON.stringify(given)} is not declared (channels: ${names.map((name) => JSON.stringify(name)).join(', ')}); the play is logged under that name and has no audience`,
      };
    },
    isDeclared: (name) => !declared || names.includes(name),
    declaration: (name) => declarations.find((channel) => channel.name === name),
  };
}

/**
 * The audience servers the listener sessions count: `playlog.icecast` as configured, each
 * channel's audience mounts added to the server of the same origin (its credentials and polling),
 * or as a server of its own that only URL authentication reports (no polling without credentials).
 */
export function audienceServers(icecast: readonly AudienceServer[], inputs: readonly ChannelInput[]): AudienceServer[] {
  const servers = icecast.map((server) => ({ ...server, mounts: { ...server.mounts } }));
  for (const channel of completeChannels(inputs)) {
    for (const audience of channel.audience) {
      const origin = new URL(audience.url).origin;
      let server = servers.find((candidate) => new URL(candidate.url).origin === origin);
      if (!server) {
        server = { url: audience.url, adminUser: 'admin', mounts: {} };
        servers.push(server);
      }
      for (const mount of audience.mounts) server.mounts[mount] = channel.name;
    }
  }
  return servers.filter((server) => Object.keys(server.mounts).length > 0);
}

/** The channels some audience server's mounts feed: a channel outside it has plays nobody can count. */
export function channelsWithAudience(servers: readonly AudienceServer[]): Set<string> {
  return new Set(servers.flatMap((server) => Object.values(server.mounts)));
}

export interface UnheardChannel {
  channel: string;
  /** The play on air. */
  dbid: number;
  problem: string;
}

/**
 * The channels on air whose listeners nobody counts (docs/channels.md "No silent zeros"): a play
 * there would end with 0 listeners or none, for want of an audience source, not of an audience.
 * Asked only where listeners are counted at all (an audience server or declared channels).
 */
export function unheardChannels(onAir: readonly { channel: string; dbid: number; ended: boolean }[], heard: ReadonlySet<string>): UnheardChannel[] {
  return onAir
    .filter((play) => !play.ended && !heard.has(play.channel))
    .map((play) => ({
      channel: play.channel,
      dbid: play.dbid,
      problem: `on air with no audience source: no Icecast mount in playlog.icecast or channels[].audience feeds channel ${JSON.stringify(play.channel)}, so its listeners are not counted`,
    }));
}
