'use strict';
// Loaded into a `svc serve` child with `node --require` (test/integration/outputs/fault-injection.test.ts):
// kills the process with SIGKILL (kill -9) at one step of a submission, the n-th time it is reached.
// SVC_TEST_FAULT=<step>[:<n>], steps:
//   track-row     right after the track row is written (SQLite: inside its transaction, before the
//                 outputs' change row; PostgreSQL: once the insert is answered, before its COMMIT)
//   after-commit  once the store has committed the record, before it is announced or queued
//   before-answer as the POST /v1/remoteinput answer is about to be written
const [step = '', nth = '1'] = (process.env.SVC_TEST_FAULT || '').split(':');
let reached = 0;
const due = (name) => name === step && ++reached === Number(nth);
// The step is named on stderr first (a pipe: written at once), so the test can tell where it died.
const die = () => {
  process.stderr.write(`fault-injection: kill -9 at ${step} #${reached}\n`);
  process.kill(process.pid, 'SIGKILL');
};
const isTrackInsert = (sql) => typeof sql === 'string' && /INSERT INTO tracks/.test(sql);

const Database = require('better-sqlite3');
let trackInserted = false;
const prepare = Database.prototype.prepare;
Database.prototype.prepare = function prepareWithFaults(source) {
  const statement = prepare.call(this, source);
  if (!isTrackInsert(source)) return statement;
  const get = statement.get;
  statement.get = function getWithFaults(...params) {
    const row = get.apply(this, params);
    trackInserted = true;
    if (due('track-row')) die();
    return row;
  };
  return statement;
};
// The track's transaction has committed when its function returns.
const transaction = Database.prototype.transaction;
Database.prototype.transaction = function transactionWithFaults(fn) {
  const run = transaction.call(this, fn);
  const wrapped = function runWithFaults(...args) {
    trackInserted = false;
    const result = run.apply(this, args);
    if (trackInserted && due('after-commit')) die();
    return result;
  };
  return Object.assign(wrapped, { immediate: run.immediate, deferred: run.deferred, exclusive: run.exclusive, default: run.default });
};

const pg = require('pg');
// The track insert runs in a transaction on one client (store/postgres/tracks.ts). The last insert
// of a batch carries the COMMIT in the same message (store/postgres/connection.ts withCommit).
// `track-row` sends that insert without its COMMIT and dies once it is answered: the row is
// written inside the transaction and never committed. `after-commit` dies once the COMMIT has
// answered: the batch's last insert's, or a COMMIT statement after inserts that did not carry it.
// Only such a COMMIT counts: a client whose insert carried its COMMIT is not marked, so the next
// transaction on that pooled client (the outputs' expand, say) is not taken for the insert's.
const clientQuery = pg.Client.prototype.query;
const CARRIED_COMMIT = /;\s*COMMIT\s*$/i;
const committing = new WeakSet();
const trackInsert = (client, args, text) => {
  const carriesCommit = CARRIED_COMMIT.test(text);
  if (due('track-row')) return clientQuery.apply(client, carriesCommit ? [text.replace(CARRIED_COMMIT, '')] : args).then(die);
  const answer = clientQuery.apply(client, args);
  if (!carriesCommit) {
    committing.add(client);
    return answer;
  }
  committing.delete(client);
  return due('after-commit') ? answer.then(die) : answer;
};
pg.Client.prototype.query = function queryWithFaults(...args) {
  const text = typeof args[0] === 'string' ? args[0] : args[0] && args[0].text;
  const promised = typeof args.at(-1) !== 'function';
  if (promised && isTrackInsert(text)) return trackInsert(this, args, text);
  const answer = clientQuery.apply(this, args);
  if (typeof answer?.then !== 'function') return answer;
  if (committing.has(this) && /^\s*(COMMIT|ROLLBACK)/i.test(text || '')) {
    committing.delete(this);
    if (/^\s*COMMIT/i.test(text) && due('after-commit')) return answer.then(die);
  }
  return answer;
};

const http = require('node:http');
const end = http.ServerResponse.prototype.end;
http.ServerResponse.prototype.end = function endWithFaults(...args) {
  const request = this.req;
  if (request && request.method === 'POST' && (request.url || '').startsWith('/v1/remoteinput') && due('before-answer')) die();
  return end.apply(this, args);
};
