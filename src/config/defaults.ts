import os from 'node:os';
import path from 'node:path';

export const DEFAULT_PORT = 8899;

/** `$XDG_DATA_HOME/svc/svc.db`, else `~/.local/share/svc/svc.db` (docs/decisions.md). */
export function defaultDatabasePath(env: NodeJS.ProcessEnv = process.env): string {
  const dataHome = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(os.homedir(), '.local', 'share');
  return path.join(dataHome, 'svc', 'svc.db');
}

/** The files cosmiconfig looks for, in order, in the working directory (docs/decisions.md). */
export const CONFIG_SEARCH_PLACES = ['.svcrc', '.svcrc.json', '.svcrc.yaml', '.svcrc.yml', '.svcrc.js', 'svc.config.js', 'package.json'];
