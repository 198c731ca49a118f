import { configSchema } from '../../../src/config/schema';
import { reportSettings } from '../../../src/reports/settings';

// The reports.* keys (docs/reports.md "Configuration").

const defaults = configSchema.getDefault();
const validate = (reports: object) => configSchema.validateSync({ ...defaults, reports: { ...defaults.reports, ...reports } }, { strict: true });

describe('reports config', () => {
  it('When the keys are set, then they reach the report settings as given', () => {
    const config = validate({ service: 'KSVC', category: 'A', minSeconds: 30, timeZone: 'America/New_York', stationType: 'FM', stationFormat: 'Jazz' });
    expect(reportSettings(config)).toEqual({
      service: 'KSVC',
      category: 'A',
      minSeconds: 30,
      timeZone: 'America/New_York',
      stationType: 'FM',
      stationFormat: 'Jazz',
      soundexchange: { layout: 'e8', fileName: 'regulation' },
      contact: { name: '', street: '', city: '', phone: '', email: '' },
    });
  });

  it('When no time zone is set, then this machine`s zone is used', () => {
    const settings = reportSettings(validate({}));
    expect(settings.timeZone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
    expect(settings).toMatchObject({ service: '', category: '', minSeconds: 0, stationType: 'OT', stationFormat: '' });
  });

  it.each([
    [{ timeZone: 'Mars/Olympus_Mons' }, /reports.timeZone must be an IANA time zone/],
    [{ stationType: 'TV' }, /reports.stationType must be one of: AM, FM, OT/],
    [{ minSeconds: -1 }, /reports.minSeconds must be 0 or a positive number of seconds/],
    [{ category: 'webcast' }, /reports.category must be one of: A, B, C, H, I, J, K/],
    [{ soundexchange: { layout: 'e9', fileName: 'regulation' } }, /reports.soundexchange.layout must be one of: e8, e7/],
  ])('When %j is set, then the config is refused naming the key', (reports, message) => {
    expect(() => validate(reports)).toThrow(message);
  });
});
