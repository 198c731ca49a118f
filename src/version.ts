import fs from 'node:fs';
import path from 'node:path';

/** The application version, read once from package.json (GET /v1/status, User-Agent). */
export const VERSION: string = (() => {
  const file = path.join(__dirname, '..', 'package.json');
  const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  const version = typeof parsed === 'object' && parsed !== null && 'version' in parsed ? parsed.version : undefined;
  return typeof version === 'string' ? version : '0.0.0';
})();
