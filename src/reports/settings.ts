import type { FrozenConfig } from '../config/schema';
import type { ReportSettings } from './format';

// The `reports.*` keys as a run reads them (docs/reports.md "Configuration").

/** The zone of this machine, for a station that names none. */
export function systemTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

export function reportSettings(config: Pick<FrozenConfig, 'reports'>): ReportSettings {
  const { reports } = config;
  return {
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
