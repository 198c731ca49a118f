import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// The outside programs and services some tests run against (README.md "Development"). A test that
// needs one that is missing is skipped with one line naming the program and its Debian package;
// under CI (`CI=true`) it fails instead, naming them, so CI cannot pass with a peer quietly absent.
// `npm run setup-peers` installs the programs on Debian/Ubuntu. Under `npm test`
// (test/run-tests.js) the skip lines are collected in SVC_TEST_SKIPS_DIR and printed at the end.

export interface Peer {
  /** The program (or service) a user would look for. */
  program: string;
  /** The Debian/Ubuntu package that provides it. */
  debianPackage: string;
  /** Whether it can be used here; asked once per test file. */
  present(): boolean;
}

/**
 * Admin folders a user's PATH often lacks although the program is installed (nginx lives in
 * /usr/sbin). SVC_TEST_ADMIN_DIRS replaces the list (empty: none), so a run can stand for a
 * machine where nothing is installed.
 */
const ADMIN_DIRS = (process.env.SVC_TEST_ADMIN_DIRS ?? '/usr/local/sbin:/usr/sbin:/sbin').split(path.delimiter).filter((dir) => dir !== '');

/** The full path of `program` on PATH (then in the admin folders), or undefined. */
export function findProgram(program: string, searchPath = process.env.PATH ?? '', adminDirs: readonly string[] = ADMIN_DIRS): string | undefined {
  const dirs = [...searchPath.split(path.delimiter).filter((dir) => dir !== ''), ...adminDirs];
  for (const dir of dirs) {
    const file = path.join(dir, program);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/** Whether a TCP connection to host:port opens within two seconds (synchronous, so `describe` can be chosen). */
function tcpAnswers(url: string, defaultPort: number): boolean {
  const parsed = new URL(url);
  const port = Number(parsed.port || defaultPort);
  const host = parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  const probe = spawnSync(
    process.execPath,
    [
      '-e',
      `const s = require('node:net').connect(Number(process.argv[2]), process.argv[1]); s.setTimeout(2000, () => process.exit(1)); s.on('connect', () => process.exit(0)); s.on('error', () => process.exit(1));`,
      host,
      String(port),
    ],
    { timeout: 5000 },
  );
  return probe.status === 0;
}

function program(name: string, debianPackage: string): Peer {
  let found: boolean | undefined;
  return {
    program: name,
    debianPackage,
    present() {
      found ??= findProgram(name) !== undefined;
      return found;
    },
  };
}

/** The PostgreSQL server the store tests use (test/helpers/postgres.ts). */
export const POSTGRES_TEST_URL = process.env.SVC_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
/** The Mosquitto broker the MQTT output's tests publish to. */
export const MQTT_TEST_URL = process.env.SVC_TEST_MQTT_URL || 'mqtt://127.0.0.1:1883';

function service(name: string, debianPackage: string, url: string, defaultPort: number): Peer {
  let found: boolean | undefined;
  return {
    program: `${name} on ${new URL(url).host}`,
    debianPackage,
    present() {
      found ??= tcpAnswers(url, defaultPort);
      return found;
    },
  };
}

/** A package of data files rather than a program: present when its folder is. */
function folder(dir: string, debianPackage: string): Peer {
  return { program: dir, debianPackage, present: () => fs.existsSync(dir) };
}

let postgresAnswered: boolean | undefined;

/** Whether the server accepts a login (a port that is open is not enough: pgbouncer, a wrong role). */
function postgresAnswers(): boolean {
  if (postgresAnswered === undefined) {
    const probe = spawnSync(
      process.execPath,
      [
        '-e',
        `const pg = require('pg'); const c = new pg.Client({ connectionString: process.argv[1], connectionTimeoutMillis: 2000 }); c.connect().then(() => c.end()).then(() => process.exit(0), () => process.exit(1));`,
        POSTGRES_TEST_URL,
      ],
      { cwd: __dirname, timeout: 5000 },
    );
    postgresAnswered = probe.status === 0;
  }
  return postgresAnswered;
}

export const PEERS = {
  opusenc: program('opusenc', 'opus-tools'),
  flac: program('flac', 'flac'),
  oggenc: program('oggenc', 'vorbis-tools'),
  vorbiscomment: program('vorbiscomment', 'vorbis-tools'),
  sox: program('sox', 'sox'),
  ezstream: program('ezstream', 'ezstream'),
  icecast2: program('icecast2', 'icecast2'),
  curl: program('curl', 'curl'),
  nginx: program('nginx', 'nginx'),
  // The HAProxy example's active health checks (test/integration/instances/behind-haproxy.test.ts).
  haproxy: program('haproxy', 'haproxy'),
  chromium: program('chromium', 'chromium'),
  pgbouncer: program('pgbouncer', 'pgbouncer'),
  // OBS Studio and the X server it runs under (test/helpers/obs-studio.ts); Debian's obs-studio
  // ships the obs-websocket 5 plugin the obs output talks to.
  obs: program('obs', 'obs-studio'),
  Xvfb: program('Xvfb', 'xvfb'),
  // Mixxx, the DJ software, driven through its keyboard shortcuts (test/helpers/mixxx.ts).
  mixxx: program('mixxx', 'mixxx'),
  xdotool: program('xdotool', 'xdotool'),
  pg_dump: program('pg_dump', 'postgresql-client'),
  pg_restore: program('pg_restore', 'postgresql-client'),
  psql: program('psql', 'postgresql-client'),
  // script(1) gives a command a pseudo-terminal; Debian's essential bsdutils has it.
  script: program('script', 'bsdutils'),
  // Recognition (docs/recognition.md "What it needs"): the decoder, the tag reader, the fingerprinter,
  // and Debian's packaged music the integration tests and the bench build DJ sets from.
  ffmpeg: program('ffmpeg', 'ffmpeg'),
  ffprobe: program('ffprobe', 'ffmpeg'),
  fpcalc: program('fpcalc', 'libchromaprint-tools'),
  'hyperrogue-music': folder('/usr/share/hyperrogue/music', 'hyperrogue-music'),
  // The shipped systemd units are checked offline (test/integration/systemd-units.test.ts).
  'systemd-analyze': program('systemd-analyze', 'systemd'),
  // The Prometheus text of GET /metrics is checked with promtool (test/integration/metrics.test.ts).
  promtool: program('promtool', 'prometheus'),
  // Building better-sqlite3 where its prebuilt binary cannot be downloaded (docs/running.md "Installing without a clone").
  'g++': program('g++', 'g++'),
  make: program('make', 'make'),
  postgresql: { ...service('PostgreSQL', 'postgresql', POSTGRES_TEST_URL, 5432), present: postgresAnswers },
  mosquitto: service('Mosquitto', 'mosquitto', MQTT_TEST_URL, 1883),
} satisfies Record<string, Peer>;

export type PeerName = keyof typeof PEERS;

/** The tools that make the Ogg test files (test/helpers/audio-files.ts). */
export const AUDIO_TOOLS: readonly PeerName[] = ['sox', 'oggenc', 'vorbiscomment', 'opusenc', 'flac'];

/** The line printed for one missing peer: what is missing, where to get it, which suite it skips. */
export function skipLine(peer: Pick<Peer, 'program' | 'debianPackage'>, suite: string): string {
  return `skipped: ${peer.program} is missing (Debian package ${peer.debianPackage}): "${suite}"`;
}

export function missingPeers(names: readonly PeerName[]): Peer[] {
  return [...new Set(names)].map((name) => PEERS[name]).filter((peer) => !peer.present());
}

/** Whether this run is CI's, where a missing peer is a failure (`CI=true`, as CI services set it). */
export function underCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = (env.CI ?? '').toLowerCase();
  return value !== '' && value !== 'false' && value !== '0';
}

/** Prints skip lines now, or hands them to `npm test` to print at the end. */
export function reportSkip(lines: readonly string[]): void {
  const dir = process.env.SVC_TEST_SKIPS_DIR;
  if (dir && fs.existsSync(dir)) {
    fs.appendFileSync(path.join(dir, `skips-${process.pid}.txt`), lines.map((line) => `${line}\n`).join(''));
  } else {
    process.stderr.write(lines.map((line) => `${line}\n`).join(''));
  }
}

/**
 * Whether every peer named is present. When one is missing, says so once for `suite`: one skip
 * line per missing peer, or, under CI, a failing test that names them.
 */
export function peersPresent(names: readonly PeerName[], suite: string): boolean {
  const missing = missingPeers(names);
  if (missing.length === 0) return true;
  const lines = missing.map((peer) => skipLine(peer, suite));
  reportSkip(lines);
  if (underCi()) {
    test(`${suite}: has the outside programs it needs`, () => {
      throw new Error(`CI=true and a peer is missing:\n${lines.join('\n')}`);
    });
  }
  return false;
}

/**
 * For a file that runs part of its tests only with the peers (PostgreSQL beside SQLite): whether
 * they are present; when not, reported as peersPresent says and counted as one skipped test.
 */
export function peersForPart(names: readonly PeerName[], part: string): boolean {
  if (peersPresent(names, part)) return true;
  if (!underCi()) test.skip(part, () => undefined);
  return false;
}

/** `describe` when every peer named is present; otherwise skipped as peersPresent says. */
export function describeWithPeers(names: readonly PeerName[], name: string, body: () => void): void {
  if (peersPresent(names, name)) describe(name, body);
  else describe.skip(name, body);
}

export interface PeerGate {
  test: jest.It;
  describe: jest.Describe;
  beforeAll: (fn: jest.ProvidesHookCallback, timeout?: number) => void;
  afterAll: (fn: jest.ProvidesHookCallback, timeout?: number) => void;
}

/**
 * For a file whose tests mostly need the peers: Jest's own `test`, `describe` and hooks when they
 * are present; otherwise skipped tests and hooks that do nothing, reported as peersPresent says.
 */
export function gateOnPeers(names: readonly PeerName[], suite: string): PeerGate {
  if (peersPresent(names, suite)) return { test, describe, beforeAll, afterAll };
  const skipHook = () => undefined;
  return { test: test.skip, describe: describe.skip, beforeAll: skipHook, afterAll: skipHook };
}
