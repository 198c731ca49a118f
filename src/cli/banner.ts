import path from 'node:path';
import { reachableHost, serverUrl } from '../config/client-target';
import { withoutPassword } from '../store/postgres/connection';
import type { SchemaVersion } from '../store/store';

// What `svc serve` prints on start (docs/first-hour.md "What `svc serve` prints"): the URL, the
// pages with one line each, the database, the outputs, the config file and the version. The first line keeps its
// "svc listening on URL" shape: scripts and tests wait for it. Pure.

export interface BannerFacts {
  /** The listening URL, as the server reports it. */
  url: string;
  host: string;
  port: number;
  database: string;
  /** The config file loaded, or null when none was found. */
  configFile: string | null;
  /** The working directory (a relative SQLite path is resolved from it). */
  cwd: string;
  /** Where the config was searched for, shown when none was found (config/defaults.ts). */
  configSearch: string;
  /** The outputs configured (docs/outputs.md), each by name and type. */
  outputs?: readonly { name: string; type: string }[];
  /** The Icecast source listener, when one runs (docs/dj-software.md). */
  icecast?: IcecastBannerFacts;
  /** The release and commit (version.ts versionText), and the schema the database is at. */
  version?: { text: string; schema: SchemaVersion };
}

export interface IcecastBannerFacts {
  url: string;
  /** Which password a source gives: the shared secret or icecastSource.password (one is required). */
  password: 'secret' | 'own';
}

const ICECAST_LOGIN: Readonly<Record<IcecastBannerFacts['password'], string>> = {
  secret: 'any user, password: the shared secret',
  own: 'any user, password: icecastSource.password',
};

const PAGES: readonly (readonly [name: string, path: string, purpose: string])[] = [
  ['overlay', '/', 'now playing, for an OBS browser source (800x200, transparent)'],
  ['slideshow', '/slideshow', "the current track's images, full window (OBS, a second screen)"],
  ['history', '/history', 'the setlist, live, with CSV and text downloads'],
];

const SCHEMA_NAMES: Readonly<Record<SchemaVersion['backend'], string>> = { sqlite: 'SQLite', postgresql: 'PostgreSQL' };

export function bannerLines(facts: BannerFacts): string[] {
  // A wildcard listener is opened in a browser on this machine through loopback.
  const base = serverUrl(reachableHost(facts.host), facts.port);
  const width = Math.max(...PAGES.map(([, path]) => (base + path).length));
  const lines = [`svc listening on ${facts.url}`];
  for (const [name, path, purpose] of PAGES) lines.push(`  ${name.padEnd(10)} ${(base + path).padEnd(width)}  ${purpose}`);
  if (facts.icecast) {
    lines.push(
      `  ${'icecast'.padEnd(10)} ${facts.icecast.url.padEnd(width)}  DJ software's Icecast settings: any mount, ${ICECAST_LOGIN[facts.icecast.password]}`,
    );
  }
  lines.push(`  ${'database'.padEnd(10)} ${describeDatabase(facts.database, facts.cwd)}`);
  const outputs = facts.outputs ?? [];
  lines.push(`  ${'outputs'.padEnd(10)} ${outputs.length === 0 ? 'none' : outputs.map((output) => `${output.name} (${output.type})`).join(', ')}`);
  lines.push(`  ${'config'.padEnd(10)} ${facts.configFile ?? `none found (${facts.configSearch})`}`);
  if (facts.version)
    lines.push(`  ${'version'.padEnd(10)} ${facts.version.text}, ${SCHEMA_NAMES[facts.version.schema.backend]} schema ${facts.version.schema.version}`);
  return lines;
}

function describeDatabase(database: string, cwd: string): string {
  if (database === ':memory:') return ':memory: (in memory, gone when svc stops)';
  if (/^postgres(ql)?:\/\//i.test(database)) return `${withoutPassword(database)} (PostgreSQL)`;
  return `${path.resolve(cwd, database)} (SQLite)`;
}
