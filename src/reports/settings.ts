import type { FrozenConfig } from '../config/schema';
import type { ReportSettings } from './format';
import { audienceServers, channelsWithAudience } from '../domain/channels';

// The `reports.*` keys as a run reads them (docs/reports.md "Configuration").

/** The zone of this machine, for a station that names none. */
export function systemTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

export function reportSettings(config: Pick<FrozenConfig, 'reports'> & Partial<Pick<FrozenConfig, 'channels'>>): ReportSettings {
  const { reports } = config;
  const declared = config.channels ?? [];
  return {
    ...(declared.length === 0 ? {} : { channelIdentities: Object.fromEntries(declared.map((channel) => [channel.name, { ...channel.report }])) }),
    service: reports.service,
    category: reports.category,
    timeZone: reports.timeZone === '' ? systemTimeZone() : reports.timeZone,
    minSeconds: reports.minSeconds,
    stationType: reports.stationType,
    stationFormat: reports.stationFormat,
    soundexchange: { layout: reports.soundexchange.layout, fileName: reports.soundexchange.fileName },
    contact: { ...reports.contact },
  };
}

/** The settings of a run for `channel`: its declared report identity over the `reports.*` values (docs/channels.md). */
export function settingsForChannel(settings: ReportSettings, channel: string | undefined): ReportSettings {
  const identity = channel === undefined ? undefined : settings.channelIdentities?.[channel];
  if (identity === undefined) return settings;
  return {
    ...settings,
    service: identity.service || settings.service,
    category: identity.category || settings.category,
    timeZone: identity.timeZone || settings.timeZone,
    ...(identity.streamId === '' ? {} : { streamId: identity.streamId }),
  };
}

/** The channels an audience mount feeds, where listeners are counted at all (docs/channels.md "No silent zeros"). */
export function heardChannels(config: Pick<FrozenConfig, 'playlog' | 'channels'>): Pick<ReportSettings, 'heardChannels'> {
  const servers = audienceServers(config.playlog.icecast, config.channels);
  if (servers.length === 0 && config.channels.length === 0) return {};
  return { heardChannels: [...channelsWithAudience(servers)].sort() };
}
