import fs from 'node:fs';
import { describeWithChromium, launchBrowser, type Browser } from '../../helpers/browser';
import { startTestServer, type TestServer } from '../../helpers/test-server';

// The "Reports" section of the history page (docs/reports.md "From the history page"), in
// headless Chromium: pick a month and a format, see the problems, download the file anyway.

const SECRET = 'page-secret';

describeWithChromium('the Reports section of the history page, in headless Chromium', () => {
  jest.setTimeout(60_000);
  let t: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestServer({ config: { secret: SECRET, reports: { service: 'KSVC', category: 'A', timeZone: 'UTC' } } });
    const { tracks } = t.server;
    const play = async (startedAt: string, artist: string, title: string) =>
      tracks.insert({
        receivedSeq: await tracks.nextReceivedSeq(),
        receivedAt: startedAt,
        metadata: { artist, title },
        play: { startedAt, channel: 'main', kind: 'music', usage: 'feature' },
      });
    await play('2026-10-05T20:00:00.000Z', 'Daft Punk', 'One More Time');
    await play('2026-10-05T20:05:20.000Z', 'Sigur Rós', 'Hoppípolla');
    // The last play never ended: a problem the check names.
    await play('2026-10-05T20:12:00.000Z', 'Дельфин', 'Весна');
  });
  afterAll(async () => {
    await browser?.close();
    await t.close();
  });

  it('When a month and a format are picked, then problems are listed, and with "write it even with problems" the file downloads', async () => {
    browser = await launchBrowser({ width: 1000, height: 900 }, { timezoneId: 'UTC' });
    const page = await browser.context.newPage();
    await page.goto(`${t.url}/history`);
    await page.fill('#report-month', '2026-10');
    await page.selectOption('#report-format', 'bmi');
    await page.fill('#report-secret', SECRET);
    await page.click('#report-download');
    await page.waitForSelector('#report-problems li');
    expect(await page.locator('#report-problems li').allTextContents()).toEqual(['dbid 3: no end time (still on air, or never ended)']);

    await page.check('#report-allow');
    const [file] = await Promise.all([page.waitForEvent('download'), page.click('#report-download')]);
    expect(file.suggestedFilename()).toBe('KSVC2610.emr');
    const records = fs.readFileSync(await file.path(), 'utf8').split('\r\n');
    expect(records.map((record) => record.slice(0, 4))).toEqual(['HEDR', 'FMDT', 'FMDT', 'FMDT', 'TRLR', '']);
    expect(records[2]).toContain('Hoppipolla');
    expect(await page.textContent('#report-status')).toBe('Downloaded KSVC2610.emr with 1 problem.');
  });

  it('When the secret is wrong, then the section says the server refused and nothing downloads', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${t.url}/history`);
    await page.fill('#report-month', '2026-10');
    await page.fill('#report-secret', 'wrong');
    await page.click('#report-download');
    await page.locator('#report-status', { hasText: 'The server refused' }).waitFor();
    expect(await page.textContent('#report-status')).toBe('The server refused (403): Invalid secret');
  });
});
