import path from 'node:path';
import Database from 'better-sqlite3';
import { MARKS, REPORT_COLUMNS_VERSION } from '../../../src/domain/recording';
import type { ReportFormatName, ReportRun, ReportSettings } from '../../../src/reports/format';
import type { ReportPlay } from '../../../src/reports/rows';
import { slicedSource } from '../../../src/reports/slices';
import { snapshotReportSource, storeReportSource } from '../../../src/reports/store-source';
import type { ReportSource } from '../../../src/reports/run-report';
import { problemLine } from '../../../src/reports/checks';
import { openStore } from '../../../src/store/open-store';
import type { Store } from '../../../src/store/store';
import { PLAYS, SESSIONS } from '../../fixtures/reports/play-log';
import { createTestDatabase, postgresForPart, type TestDatabase } from '../../helpers/postgres';
import { makeRun, renderToText, US_SETTINGS } from '../../helpers/reports';
import { makeTempDir } from '../../helpers/temp-dir';

// The store answers a report's passes where the plays are (src/store/play-reports.ts): the same
// problems, facts and files as reading every stored play one by one (the path a source without
// a store takes), on SQLite and on PostgreSQL, for clean and broken logs, names filled from later
// plays, rows stored before the report columns existed, and more candidates than a page holds.

type Row = Record<string, unknown>;

interface StoredLog {
  store: Store;
  /** Runs SQL on the database directly (`?` placeholders; numbered for PostgreSQL here). */
  run(sql: string, values?: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

async function sqliteLog(): Promise<StoredLog> {
  const temp = makeTempDir('svc-stored-queries-');
  const file = path.join(temp.dir, 'log.db');
  const store = await openStore(file, { maxImageBytes: 1024 * 1024 });
  const db = new Database(file);
  return {
    store,
    run: (sql, values = []) => {
      const statement = db.prepare(sql);
      return Promise.resolve(statement.reader ? (statement.all(...values) as Row[]) : (statement.run(...values), []));
    },
    async close() {
      db.close();
      await store.close();
      temp.cleanup();
    },
  };
}

async function postgresLog(database: TestDatabase): Promise<StoredLog> {
  const store = await openStore(database.url, { maxImageBytes: 1024 * 1024 });
  let n = 0;
  return {
    store,
    run: (sql, values = []) =>
      database
        .query<Row>(
          sql.replace(/\?/g, () => `$${++n}`),
          values,
        )
        .finally(() => (n = 0)),
    close: () => store.close(),
  };
}

/** The metadata a stored play would have carried for this report row. */
function metadataOf(play: ReportPlay): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    artist: play.artist,
    title: play.title,
    album: play.album,
    label: play.label,
    isrc: play.isrc,
    catalognumber: play.catalogue_number,
    writers: play.composers,
    duration: play.duration,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/** Writes plays as rows with their own dbids and no report columns (as before the migration), and sessions through the store. */
async function writeLog(log: StoredLog, plays: readonly ReportPlay[], postgres: boolean, { sessions = true } = {}): Promise<void> {
  const overriding = postgres ? 'OVERRIDING SYSTEM VALUE' : '';
  for (const play of plays)
    await log.run(
      `INSERT INTO tracks (dbid, received_seq, received_at, stored_at, metadata, started_at, ended_at, end_reason, channel, kind, usage, trimmed_seconds, listeners, listeners_done)
       ${overriding} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${postgres ? 'true' : '1'})`,
      [
        play.dbid,
        play.dbid,
        play.started_at,
        play.started_at,
        JSON.stringify(metadataOf(play)),
        play.started_at,
        play.ended_at,
        play.end_reason,
        play.channel,
        play.kind,
        play.usage,
        play.trimmed_seconds,
        play.listeners === null ? null : JSON.stringify(play.listeners),
      ],
    );
  for (const session of sessions ? SESSIONS : []) {
    const key = { server: 'http://127.0.0.1:8000', mount: '/live', clientId: String(session.id) };
    await log.store.plays.openSession(
      {
        ...key,
        channel: session.channel,
        source: 'poll',
        address: session.address ?? session.address_hash,
        userAgent: session.user_agent ?? '',
        connectedAt: session.connected_at,
      },
      SESSIONS.length,
    );
    if (session.disconnected_at !== null) await log.store.plays.closeSession(key, session.disconnected_at);
  }
}

const base = PLAYS[0];
const at = (minute: number) => new Date(Date.parse('2026-10-01T20:00:00.000Z') + minute * 60_000).toISOString();
const broken = (dbid: number, minute: number, fields: Partial<ReportPlay>): ReportPlay => ({
  ...base,
  dbid,
  started_at: at(minute),
  ended_at: at(minute + 4),
  ...fields,
});

/** A log that breaks every check a store can hold, on two channels, with names a census must fill from later plays. */
const BROKEN: ReportPlay[] = [
  broken(201, 0, { isrc: 'GB123', label: undefined, listeners: null, channel: 'jazz' }),
  broken(202, 3, { artist: 'DAFT PUNK', title: 'ONE MORE TIME', isrc: undefined }),
  broken(203, 10, { isrc: undefined, ended_at: at(9) }),
  broken(204, 20, { kind: 'jingle', title: 'Station ID', artist: undefined }),
  broken(205, 24, { ended_at: at(24.25), trimmed_seconds: 5 }),
  broken(206, 30, { isrc: undefined }),
  broken(207, 33, { artist: 'DAFT PUNK', isrc: undefined, channel: 'jazz' }),
  broken(208, 40, { title: undefined, isrc: 'US-RC1-76-07839', album: undefined, label: undefined }),
  broken(209, 50, { isrc: 'usrc17607839', album: undefined, label: 'Later Label' }),
  broken(210, 60, { isrc: 'USRC17607839', album: 'Later Album', listeners: null }),
  broken(211, 70, { ended_at: null, artist: 'Дельфин', title: 'ВЕСНА', isrc: undefined }),
  broken(212, 72, { artist: 'Дельфин', title: 'Весна', isrc: undefined, album: undefined }),
  broken(213, 80, { ended_at: at(86), trimmed_seconds: 2 }),
  broken(214, 83, { channel: 'main', usage: 'background' }),
  // On air for a day (only the store's long-play sift finds it among clean plays), a name that
  // starts a spreadsheet formula, and one with no ASCII spelling.
  broken(215, 90, { channel: 'late', ended_at: at(90 + 24 * 60) }),
  broken(216, 100, { channel: 'late2', artist: '=HYPERLINK("http://x.example")' }),
  broken(217, 110, { channel: 'late3', album: '坂本龍一' }),
  broken(218, 115, { channel: 'late4', composers: ['Thomas Bangalter', '坂本龍一'] }),
];

const FORMATS: ReadonlyArray<[ReportFormatName, Partial<ReportRun>]> = [
  ['soundexchange', {}],
  ['soundexchange', { variant: 'csv' }],
  ['npr-playlist', { channel: 'main' }],
  ['npr-playlist', {}],
  ['ppl', {}],
  ['ppl', { programmeDate: '2026-10-01' }],
  ['prs', {}],
  ['bmi', {}],
  ['bmi', { channel: 'jazz' }],
];

/**
 * What the check says of the fixed log in those runs: the Han album has no ASCII spelling
 * (soundexchange twice), nor the Han writer (bmi), and the jazz channel has no plays (bmi
 * --channel jazz).
 */
const FIXED_LOG_PROBLEMS = 4;

/** The store's source, and the same rows read one by one: the reference every answer is held to. */
function sources(store: Store): { stored: ReportSource; oneByOne: ReportSource } {
  const stored = storeReportSource(store.plays);
  return { stored, oneByOne: { plays: stored.plays, sessions: stored.sessions, hasSessions: stored.hasSessions } };
}

async function expectSameReports(store: Store, settings: ReportSettings, from: string, to: string): Promise<number> {
  const { stored, oneByOne } = sources(store);
  let problems = 0;
  for (const [format, extra] of FORMATS) {
    const run = makeRun(format, from, to, settings, extra);
    const [fast, reference] = [await renderToText(stored, run), await renderToText(oneByOne, run)];
    expect({ format, extra, problems: fast.problems.map(problemLine), facts: fast.facts, text: fast.text }).toEqual({
      format,
      extra,
      problems: reference.problems.map(problemLine),
      facts: reference.facts,
      text: reference.text,
    });
    problems += reference.problems.length;
  }
  return problems;
}

/**
 * A busy November in New York (the clocks go back on the 1st): 30 days of 24 clean plays on
 * `main`, each with a kept count, and the planted defects of issue 48: a day-long play (on a
 * channel of its own, so that it overlaps nothing), a bad ISRC with no label, a capitals
 * spelling, plays of a channel with no listener source, and the night of the clock change.
 */
function busyNovember(): ReportPlay[] {
  const start = Date.parse('2026-11-01T00:30:00.000Z');
  const clean = Array.from({ length: 30 * 24 }, (_, i): ReportPlay => {
    const startMs = start + i * 3_600_000;
    return {
      ...base,
      dbid: 1000 + i,
      started_at: new Date(startMs).toISOString(),
      ended_at: new Date(startMs + 320_000).toISOString(),
      isrc: `GBAAA26${String(i % 97).padStart(5, '0')}`,
      title: `Title ${i % 97}`,
      listeners: { atp: 2, listener_seconds: 640, peak: 2 },
    };
  });
  const planted = (dbid: number, startedAt: string, fields: Partial<ReportPlay>): ReportPlay => ({
    ...base,
    dbid,
    started_at: startedAt,
    ended_at: new Date(Date.parse(startedAt) + 240_000).toISOString(),
    listeners: { atp: 1, listener_seconds: 240, peak: 1 },
    ...fields,
  });
  return [
    ...clean,
    planted(3001, '2026-11-03T10:00:00.000Z', { channel: 'studio2', duration: 240, ended_at: '2026-11-04T10:00:00.000Z' }),
    planted(3002, '2026-11-05T10:10:00.000Z', { isrc: 'N/A', label: undefined }),
    planted(3003, '2026-11-06T10:10:00.000Z', { artist: 'DAFT PUNK', title: 'Title 5', isrc: 'GBAAA2600005' }),
    planted(3004, '2026-11-07T10:10:00.000Z', { channel: 'relay', listeners: null }),
    planted(3005, '2026-11-07T10:20:00.000Z', { channel: 'relay', listeners: null }),
    // The night of the change: 01:57 EDT to 01:03 EST, then on.
    planted(3006, '2026-11-01T05:57:00.000Z', { ended_at: '2026-11-01T06:03:00.000Z' }),
    planted(3007, '2026-11-01T06:03:00.000Z', { ended_at: '2026-11-01T06:08:00.000Z' }),
  ];
}

/** Exactly what the check of that month says for SoundExchange. */
const NOVEMBER_PROBLEMS = [
  'dbid 3001: on air 86400 s of a 240-s recording: far longer than it can have played; set its end (svc edit 3001 ended_at=...)',
  'dbid 3002: ISRC "N/A" is not 12 characters of the form CC-XXX-YY-NNNNN and no label',
  'dbid 3003: artist "DAFT PUNK" is in capitals; the same recording is spelled "Daft Punk" elsewhere in the log',
  'dbid 3004: no performances: no listener count was kept and channel "relay" has no listener sessions',
  'dbid 3005: no performances: no listener count was kept and channel "relay" has no listener sessions',
  'note: report: one file for 3 channels (main, relay, studio2); if each is a licensed service of its own, make one file each with --channel',
];

function storedQueries(backend: 'sqlite' | 'postgres'): void {
  let database: TestDatabase | undefined;
  let log: StoredLog;
  // One PostgreSQL database for the file, emptied after each test: creating and dropping one per
  // test loads the server that the rest of the suite shares.
  beforeAll(async () => {
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
  }, 30_000);
  afterAll(() => database?.drop());
  beforeEach(async () => {
    log = database ? await postgresLog(database) : await sqliteLog();
  }, 30_000);
  afterEach(async () => {
    await log.close();
    await database?.query(
      'TRUNCATE tracks, listener_sessions, listener_session_bounds, listener_open_mounts, listener_open_channels, listener_open_listeners CASCADE',
    );
  });
  const write = (plays: readonly ReportPlay[]) => writeLog(log, plays, backend === 'postgres');

  it('When the fixed log is reported, then every format is the same as reading the plays one by one, and as its golden file', async () => {
    await write(PLAYS);
    expect(await expectSameReports(log.store, US_SETTINGS, '2026-10-01', '2026-10-01')).toBe(FIXED_LOG_PROBLEMS);
    const census = await renderToText(storeReportSource(log.store.plays), makeRun('soundexchange', '2026-10-01', '2026-10-01', US_SETTINGS));
    expect(census.text.split('\r\n')[0]).toBe('^KSVC^|^A^|^Daft Punk^|^One More Time^|^GBDUW0000053^|^Discovery^|^Virgin^|7');
  });

  it.each([0, 30])(
    'When a log breaks every check (reports.minSeconds %i), then the problems, facts and files are those of reading the plays one by one',
    async (minSeconds) => {
      await write(BROKEN);
      const problems = await expectSameReports(log.store, { ...US_SETTINGS, minSeconds }, '2026-10-01', '2026-10-01');
      expect(problems).toBeGreaterThan(20);
      const check = await renderToText(storeReportSource(log.store.plays), makeRun('bmi', '2026-10-01', '2026-10-01', { ...US_SETTINGS, minSeconds }));
      const named = check.problems.map(problemLine);
      expect(named).toContain('dbid 215: on air 86400 s of a 320-s recording: far longer than it can have played; set its end (svc edit 215 ended_at=...)');
      expect(named).toContain('note: dbid 216: artist "=HYPERLINK("http://x.example")" starts like a spreadsheet formula; written with a leading \'');
      expect(named).toContain('dbid 218: writers "坂本龍一" has no ASCII spelling (written "????"); give it one with svc edit 218 writers=...');
      // BMI writes no album: a Han album blocks the SoundExchange file, not this one.
      expect(named.filter((line) => line.startsWith('dbid 217:'))).toEqual([]);
    },
  );

  it('When every play has a kept count, then the store sums the census, each name from the first play that has it', async () => {
    const counted = { atp: 2, listener_seconds: 480, peak: 2 };
    const plays = [
      ...PLAYS.map((play) => ({ ...play, listeners: play.listeners ?? counted })),
      ...BROKEN.filter((play) => [208, 209, 210].includes(play.dbid)).map((play) => ({ ...play, listeners: counted })),
    ];
    await write(plays);
    const { stored } = sources(log.store);
    const query = { startMs: Date.parse('2026-10-01T04:00:00.000Z'), endMs: Date.parse('2026-10-02T04:00:00.000Z') };
    expect(await stored.stored?.recordings(query, 0, true)).toBeDefined();
    expect(await expectSameReports(log.store, US_SETTINGS, '2026-10-01', '2026-10-01')).toBeGreaterThan(0);
    const census = await renderToText(stored, makeRun('soundexchange', '2026-10-01', '2026-10-01', US_SETTINGS));
    // dbid 104's ISRC is the same recording once normalized: its count joins the three.
    expect(census.text).toContain('^KSVC^|^A^|^Daft Punk^|^One More Time^|^USRC17607839^|^Later Album^|^Later Label^|7\r\n');
    expect(census.text).toContain('^KSVC^|^A^|^Delfin^|^Vesna^|^RUA1D0512345^|^Iunost^|^Misteriia zvuka^|2\r\n');
  });

  it('When a busy month holds the planted defects, then the check lists exactly them, and the night of the clock change is none', async () => {
    await write(busyNovember());
    const nowMs = Date.parse('2026-12-05T00:00:00.000Z');
    const run = makeRun('soundexchange', '2026-11-01', '2026-11-30', US_SETTINGS, { nowMs });
    const stored = await renderToText(storeReportSource(log.store.plays), run);
    expect(stored.problems.map(problemLine)).toEqual(NOVEMBER_PROBLEMS);
    const playlist = await renderToText(
      storeReportSource(log.store.plays),
      makeRun('npr-playlist', '2026-11-01', '2026-11-30', US_SETTINGS, { nowMs, channel: 'main' }),
    );
    expect(playlist.problems.map(problemLine)).toEqual([
      'dbid 3003: artist "DAFT PUNK" is in capitals; the same recording is spelled "Daft Punk" elsewhere in the log',
    ]);
    expect(playlist.text).toContain('11/01/2026 00:57:00\t11/01/2026 01:03:00\t');
    const starts = playlist.text
      .split('\n')
      .slice(1, -1)
      .map((line) => line.slice(6, 10) + line.slice(0, 2) + line.slice(3, 5) + line.slice(11, 19));
    expect([...starts].sort()).toEqual(starts);
  }, 120_000);

  it('When rows lack the report columns or carry an older version, then a report computes them first', async () => {
    await write(PLAYS);
    await log.run("UPDATE tracks SET recording_key = 'stale', spelling_key = 'stale', report_marks = 0, report_version = ? WHERE dbid = 106", [
      REPORT_COLUMNS_VERSION - 1,
    ]);
    expect(await expectSameReports(log.store, US_SETTINGS, '2026-10-01', '2026-10-01')).toBe(FIXED_LOG_PROBLEMS);
    const rows = await log.run('SELECT dbid, recording_key, report_version FROM tracks ORDER BY dbid');
    expect(rows.map((row) => [Number(row.dbid), row.recording_key, Number(row.report_version)])).toEqual(
      PLAYS.map((play): unknown[] => [play.dbid, expect.stringMatching(/^(isrc|names):/) as unknown, REPORT_COLUMNS_VERSION]),
    );
  });

  it('When plays were recognised, then the store finds them by their mark, and by their metadata while their columns are outdated', async () => {
    await write(PLAYS);
    const recognised = (dbid: number, score: string) =>
      log.run(`UPDATE tracks SET metadata = ? WHERE dbid = ?`, [
        JSON.stringify({ ...metadataOf(PLAYS.find((play) => play.dbid === dbid) as ReportPlay), recognition: 'fingerprint', recognition_score: score }),
        dbid,
      ]);
    const [first, second] = PLAYS.filter((play) => play.kind === 'music').map((play) => play.dbid);
    await recognised(first, '0.9');
    await recognised(second, '0.8');
    // The writer's columns: the first is computed by the store (the refresh), the second left as an older svc wrote it.
    await log.run('UPDATE tracks SET report_version = ?', [REPORT_COLUMNS_VERSION - 1]);
    await log.store.plays.refreshReportColumns({ from: '2026-10-01T00:00:00.000Z', to: '2026-10-02T00:00:00.000Z' });
    await log.run('UPDATE tracks SET report_marks = 0, report_version = ? WHERE dbid = ?', [REPORT_COLUMNS_VERSION - 1, second]);
    const marks = await log.run('SELECT report_marks FROM tracks WHERE dbid = ?', [first]);
    expect(Number(marks[0].report_marks) & MARKS.recognised).toBe(MARKS.recognised);
    const found = await log.store.plays.recognisedPlays({ from: '2026-10-01T00:00:00.000Z', to: '2026-10-02T00:00:00.000Z' });
    expect(found).toEqual([
      { dbid: first, score: 0.9, rate: null },
      { dbid: second, score: 0.8, rate: null },
    ]);
  });

  describe('one snapshot per report', () => {
    // Eight clean plays on the evening of 2026-10-01 in New York; while the report runs, right
    // after the check has counted them, another writer adds a ninth and renames the first.
    const eight = Array.from({ length: 8 }, (_, i) => broken(400 + i, i * 5, { isrc: `GBAAA26${String(i).padStart(5, '0')}` }));
    const writeDuring = async () => {
      const ninth = broken(408, 40, { isrc: 'GBAAA2600008' });
      await writeLog(log, [ninth], backend === 'postgres', { sessions: false });
      await log.run('UPDATE tracks SET metadata = ? WHERE dbid = 400', [JSON.stringify({ ...metadataOf(eight[0]), title: 'Renamed Later' })]);
    };
    /** `source` with the writes landing between the check's count and the file's first page. */
    const writingAfterCount = (source: ReportSource): ReportSource => {
      const { stored } = source;
      if (stored === undefined) throw new Error('the store source answers the summary');
      return {
        ...source,
        stored: {
          ...stored,
          async summary(query, minSeconds) {
            const summary = await stored.summary(query, minSeconds);
            await writeDuring();
            return summary;
          },
        },
      };
    };
    const run = makeRun('bmi', '2026-10-01', '2026-10-01', US_SETTINGS);
    const records = (text: string) => text.split('\r\n').filter((line) => line.startsWith('FMDT'));

    it('When plays are written while a report reads the store as it goes, then the check and the file disagree (the tear the snapshot prevents)', async () => {
      await write(eight);
      const torn = await renderToText(slicedSource(writingAfterCount(storeReportSource(log.store.plays))), run);
      expect([torn.facts.musicPlays, records(torn.text).length]).toEqual([8, 9]);
    });

    it('When plays are written while a report reads its snapshot, then the check and the file count the same plays, as they were', async () => {
      await write(eight);
      const snapshot = await snapshotReportSource(log.store.plays)({ startMs: run.range.startMs, endMs: run.range.endMs });
      try {
        const whole = await renderToText(slicedSource(writingAfterCount(snapshot.source)), run);
        expect([whole.facts.musicPlays, records(whole.text).length]).toEqual([8, 8]);
        expect(whole.text).not.toContain('Renamed Later');
        expect(whole.text.split('\r\n').at(-2)).toBe(`TRLR${String(10).padStart(12, '0')}${' '.repeat(23)}`);
      } finally {
        await snapshot.release();
      }
      // The next report sees the writes.
      const after = await snapshotReportSource(log.store.plays)({ startMs: run.range.startMs, endMs: run.range.endMs });
      try {
        const later = await renderToText(after.source, run);
        expect([later.facts.musicPlays, records(later.text).length]).toEqual([9, 9]);
        expect(later.text).toContain('Renamed Later');
      } finally {
        await after.release();
      }
    });
  });

  if (backend === 'postgres')
    it('When half the pool holds report snapshots, then the next report is told the server is busy, and gets one once a report ends', async () => {
      // database.poolSize 4 (the default): two snapshots at once, two connections left for writes.
      const held = [await log.store.plays.reportSnapshot(), await log.store.plays.reportSnapshot()];
      await expect(log.store.plays.reportSnapshot()).rejects.toMatchObject({ code: 'SERVER_BUSY', status: 503 });
      await write(PLAYS.slice(0, 2));
      await held[0]?.release();
      const next = await log.store.plays.reportSnapshot();
      await Promise.all([next.release(), held[1]?.release()]);
    });

  it('When more plays may have a problem than a page holds, then every one is checked in air order', async () => {
    const many = Array.from({ length: 1200 }, (_, index) =>
      broken(1000 + index, index * 4, { artist: index % 3 === 0 ? 'DAFT PUNK' : 'Daft Punk', isrc: undefined, label: undefined }),
    );
    await write(many);
    const { stored, oneByOne } = sources(log.store);
    const run = makeRun('soundexchange', '2026-10-01', '2026-10-05', US_SETTINGS);
    const [fast, reference] = [await renderToText(stored, run), await renderToText(oneByOne, run)];
    expect(reference.problems.length).toBeGreaterThan(1200);
    expect(fast.problems.map(problemLine)).toEqual(reference.problems.map(problemLine));
    expect(fast.text).toBe(reference.text);
  }, 60_000);
}

describe('stored report queries: SQLite', () => storedQueries('sqlite'));
if (postgresForPart('stored report queries on PostgreSQL')) describe('stored report queries: PostgreSQL', () => storedQueries('postgres'));
