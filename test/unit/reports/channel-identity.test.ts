import { reportRun } from '../../../src/reports/report-query';
import { reportSettings } from '../../../src/reports/settings';
import { configSchema } from '../../../src/config/schema';
import { PLAYS, SESSIONS } from '../../fixtures/reports/play-log';
import { arraySource, renderToText } from '../../helpers/reports';

// docs/channels.md: a declared channel's report identity (channels[].report) names the service,
// the category, the NPR/DS stream id and the time zone of its files; empty values leave reports.*.

const defaults = configSchema.getDefault();
const config = configSchema.validateSync({
  ...defaults,
  reports: { ...defaults.reports, service: 'KSVC', category: 'A', timeZone: 'America/New_York' },
  channels: [{ name: 'main', report: { service: 'KNEW', category: 'B', streamId: 'knew-hd1', timeZone: 'America/Chicago' } }, { name: 'Web' }],
});
const settings = reportSettings(config);
const parameters = (channel: string) => ({ from: '2026-10-01', to: '2026-10-01', channel, variant: '', programme: '' });
const NOW = Date.parse('2026-11-02T09:30:00.000Z');

describe('a declared channel’s report identity', () => {
  it('When a report is run for a channel with its own identity, then its values replace the station’s', () => {
    const run = reportRun('soundexchange', parameters('main'), settings, NOW);
    expect(run.settings).toMatchObject({ service: 'KNEW', category: 'B', timeZone: 'America/Chicago', streamId: 'knew-hd1' });
    // The day starts at midnight in the channel's own zone.
    expect(new Date(run.range.startMs).toISOString()).toBe('2026-10-01T05:00:00.000Z');
  });

  it('When a channel leaves its identity empty, or no channel is named, then the reports.* values hold', () => {
    for (const channel of ['Web', '']) {
      const run = reportRun('soundexchange', parameters(channel), settings, NOW);
      expect(run.settings).toMatchObject({ service: 'KSVC', category: 'A', timeZone: 'America/New_York' });
      expect(run.settings.streamId).toBeUndefined();
    }
  });

  it('When the channel’s files are written, then the file name, the category and the stream id are the channel’s', async () => {
    const census = await renderToText(arraySource(PLAYS, SESSIONS), reportRun('soundexchange', parameters('main'), settings, NOW));
    expect(census.fileName.startsWith('KNEW')).toBe(true);
    const rows = census.text.split('\r\n').filter(Boolean);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.split('|').slice(0, 2)).toEqual(['^KNEW^', '^B^']);
    const streams = await renderToText(arraySource(PLAYS, SESSIONS), reportRun('npr-streams', parameters('main'), settings, NOW));
    const lines = streams.text.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.split('\t')[3]).toBe('knew-hd1');
  });
});
