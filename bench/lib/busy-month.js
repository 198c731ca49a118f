'use strict';
// A month of a busy station in a SQLite file, for the reports bench and the reports memory test
// (docs/reports.md "Memory and speed"): 30 days from 2026-10-01 UTC, 400 plays a day (every 20th a
// jingle), 1,500 recordings, 200,000 listener sessions of 1 to 120 minutes. Rows go straight into
// the play log's tables in one transaction (svc's migrations make the file), with kept listener
// counts on all plays but every `nullEvery`-th, so the report's own counting is exercised too.

const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
const MONTH_START = Date.parse('2026-10-01T00:00:00.000Z');
const DAYS = 30;
const PLAYS_PER_DAY = 400;
const SESSIONS = 200_000;
const RECORDINGS = 1500;
const PLAY_MS = 86_400_000 / PLAYS_PER_DAY;

/** A small deterministic generator (LCG), so every run seeds the same month. */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const iso = (ms) => new Date(ms).toISOString();

function insertPlays(db, nullEvery) {
  // The report columns as svc's store writes them with each play (src/store/play-reports.ts).
  const { reportColumnValues } = require(path.join(ROOT, 'dist', 'store', 'play-reports'));
  const insert = db.prepare(
    `INSERT INTO tracks (received_seq, received_at, stored_at, metadata, started_at, ended_at, end_reason, channel, kind, usage, trimmed_seconds, listeners, listeners_done,
                         recording_key, spelling_key, report_marks, report_version)
     VALUES (?, ?, ?, ?, ?, ?, 'next', 'main', ?, 'feature', 0, ?, 1, ?, ?, ?, ?)`,
  );
  const plays = DAYS * PLAYS_PER_DAY;
  const recordings = new Set();
  for (let i = 0; i < plays; i++) {
    const startedMs = MONTH_START + i * PLAY_MS;
    const recording = (i * 7919) % RECORDINGS;
    const jingle = i % 20 === 19;
    if (!jingle) recordings.add(recording);
    const metadata = jingle
      ? { title: 'Station ID', duration: 10 }
      : {
          artist: `Artist ${recording % 400}`,
          title: `Title ${recording}`,
          album: `Album ${recording % 600}`,
          label: `Label ${recording % 50}`,
          isrc: `GBAAA26${String(recording).padStart(5, '0')}`,
          duration: 216,
        };
    const listeners = nullEvery > 0 && i % nullEvery === 0 ? null : JSON.stringify({ atp: (i * 13) % 90, listener_seconds: ((i * 13) % 90) * 150, peak: (i * 13) % 60 });
    insert.run(
      i + 1,
      iso(startedMs),
      iso(startedMs),
      JSON.stringify(metadata),
      iso(startedMs),
      iso(startedMs + PLAY_MS),
      jingle ? 'jingle' : 'music',
      listeners,
      ...reportColumnValues(metadata),
    );
  }
  return { plays, recordings: recordings.size };
}

function insertSessions(db, count) {
  const insert = db.prepare(
    `INSERT INTO listener_sessions (channel, source, server, mount, client_id, address, user_agent, connected_at, disconnected_at)
     VALUES ('main', 'poll', 'http://127.0.0.1:8000', '/live.mp3', ?, ?, ?, ?, ?)`,
  );
  const next = random(33);
  const monthMs = DAYS * 86_400_000;
  let longestMs = 0;
  const starts = Array.from({ length: count }, () => MONTH_START + Math.floor(next() * monthMs)).sort((a, b) => a - b);
  starts.forEach((connectedMs, i) => {
    const lengthMs = (60 + Math.floor(next() * 7140)) * 1000;
    longestMs = Math.max(longestMs, lengthMs);
    const address = `198.51.${(i >> 8) & 255}.${i & 255}`;
    insert.run(String(i + 1), address, i % 3 === 0 ? 'VLC/3.0.20 LibVLC/3.0.20' : 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0', iso(connectedMs), iso(connectedMs + lengthMs));
  });
  // The play log's bound on closed sessions, which its overlap reads rely on.
  db.prepare("INSERT INTO listener_session_bounds (channel, longest_ms) VALUES ('main', ?)").run(longestMs);
  return count;
}

/**
 * Fills `file` (a new SQLite file) with the month; answers what it holds. Needs the build
 * (dist/store/sqlite/database.js) for svc's own migrations.
 */
function seedBusyMonth(file, { nullEvery = 0, sessions = SESSIONS } = {}) {
  const { openDatabase } = require(path.join(ROOT, 'dist', 'store', 'sqlite', 'database'));
  const db = openDatabase(file);
  try {
    let filled = { plays: 0, recordings: 0 };
    db.transaction(() => {
      filled = insertPlays(db, nullEvery);
      insertSessions(db, sessions);
    })();
    return { ...filled, musicPlays: filled.plays - Math.floor(filled.plays / 20), sessions, from: '2026-10-01', to: '2026-10-30' };
  } finally {
    db.close();
  }
}

module.exports = { seedBusyMonth, MONTH_START, DAYS, PLAYS_PER_DAY, SESSIONS, RECORDINGS };
