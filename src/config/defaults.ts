import os from 'node:os';
import path from 'node:path';

export const DEFAULT_PORT = 8899;

/** `$XDG_DATA_HOME/svc/svc.db`, else `~/.local/share/svc/svc.db` (docs/decisions.md). */
export function defaultDatabasePath(env: NodeJS.ProcessEnv = process.env): string {
  const dataHome = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(os.homedir(), '.local', 'share');
  return path.join(dataHome, 'svc', 'svc.db');
}

/** The files looked for, in order, in each folder of the search (docs/configuration.md "Where svc looks"). */
export const CONFIG_SEARCH_PLACES = ['.svcrc', '.svcrc.json', '.svcrc.yaml', '.svcrc.yml', '.svcrc.js', 'svc.config.js', 'package.json'];

/** `$XDG_CONFIG_HOME/svc`, else `~/.config/svc`: the per-user config folder. */
export function userConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  const configHome = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(os.homedir(), '.config');
  return path.join(configHome, 'svc');
}

/**
 * The folders searched for a config file, nearest first: the working directory and each of its
 * parents, then the per-user config folder (docs/configuration.md "Where svc looks").
 */
export function configSearchDirs(cwd: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs: string[] = [];
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    dirs.push(dir);
    if (path.dirname(dir) === dir) break;
  }
  const userDir = userConfigDir(env);
  return dirs.includes(userDir) ? dirs : [...dirs, userDir];
}

/** Where the search looked, for "none found" messages. */
export function describeConfigSearch(cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  return `looked for ${CONFIG_SEARCH_PLACES.join(', ')} in ${path.resolve(cwd)} and its parents, then in ${userConfigDir(env)}`;
}
