import os from 'node:os';
import path from 'node:path';

// `~` at the start of a path means the home folder, in config files and flags alike
// (docs/first-hour.md "Paths"): `database: ~/svc.db` must never create a folder named `~`.

/** `~` and `~/rest` become the home folder (HOME, else the account's); anything else is kept. */
export function expandHome(value: string, env: NodeJS.ProcessEnv = process.env): string {
  if (value !== '~' && !value.startsWith('~/')) return value;
  const home = env.HOME !== undefined && env.HOME !== '' ? env.HOME : os.homedir();
  return path.join(home, value.slice(1));
}
