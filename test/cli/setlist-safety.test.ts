import { runCli } from '../helpers/run-cli';
import { startTestServer, type TestServer } from '../helpers/test-server';

// `svc history` output that a spreadsheet or a terminal opens (docs/first-hour.md "History across days"):
// formula cells neutralised in --csv, no control characters, and dates once the list spans days.

describe('svc history: downloads that cannot attack, and dates across days', () => {
  let t: TestServer;
  const env = { TZ: 'UTC' };
  beforeAll(async () => {
    t = await startTestServer();
    const { tracks } = t.server;
    const insert = async (receivedAt: string, metadata: Record<string, string>) =>
      tracks.insert({ receivedSeq: await tracks.nextReceivedSeq(), receivedAt, metadata });
    // Stored as a record whose text came in before the server stripped anything: the CLI must
    // hold on its own, whatever the server sends it.
    await insert('2026-11-21T23:50:00.000Z', { artist: '=HYPERLINK("http://evil.example","click")', title: "+cmd|' /C calc'!A0" });
    await insert('2026-11-22T00:10:00.000Z', { artist: '@SUM(1+1)', title: '-2+3', album: '\tTabbed' });
    await insert('2026-11-22T00:20:00.000Z', { artist: 'Evil\u001b[2J\u009b31m', title: 'Safe' });
  });
  afterAll(() => t.close());

  it('When --csv is given, then cells starting with = + - @ or tab get a leading quote, and control characters are gone', async () => {
    const result = await runCli(['history', '--url', t.url, '--csv'], { env });
    expect(result.code).toBe(0);
    expect(result.stdout.split('\r\n')).toEqual([
      'received_at,artist,title,album,label,date,isrc,duration,started_at,ended_at,end_reason,kind,usage,channel,dj,show,atp,listener_seconds,peak',
      `2026-11-21T23:50:00.000Z,"'=HYPERLINK(""http://evil.example"",""click"")",'+cmd|' /C calc'!A0,,,,,,2026-11-21T23:50:00.000Z,2026-11-22T00:10:00.000Z,next,music,feature,main,,,,,`,
      "2026-11-22T00:10:00.000Z,'@SUM(1+1),'-2+3,'\tTabbed,,,,,2026-11-22T00:10:00.000Z,2026-11-22T00:20:00.000Z,next,music,feature,main,,,,,",
      '2026-11-22T00:20:00.000Z,Evil[2J31m,Safe,,,,,,2026-11-22T00:20:00.000Z,,,music,feature,main,,,,,',
      '',
    ]);
  });

  it('When the setlist spans days, then text lines carry the date; within a day they do not', async () => {
    const spanning = await runCli(['history', '--url', t.url], { env });
    expect(spanning.stdout.split('\n')).toEqual([
      '2026-11-21 23:50  =HYPERLINK("http://evil.example","click") - +cmd|\' /C calc\'!A0',
      '2026-11-22 00:10  @SUM(1+1) - -2+3',
      '2026-11-22 00:20  Evil [2J 31m - Safe',
      '',
    ]);
    const oneDay = await runCli(['history', '--url', t.url, '--since', '2026-11-22T00:00Z'], { env });
    expect(oneDay.stdout.split('\n')).toEqual(['00:10  @SUM(1+1) - -2+3', '00:20  Evil [2J 31m - Safe', '']);
  });
});
