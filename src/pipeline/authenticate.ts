import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors';
import type { Credential } from './parse';

// Stage 2: the shared secret (docs/http-api.md; docs/decisions.md "HTTP behaviour").

export function authenticate(credential: Credential | null, configuredSecret: string): void {
  if (configuredSecret === '') return;
  if (!credential) throw new AppError('MISSING_SECRET');
  if (credential.bytes === null || !secretMatches(credential.bytes, Buffer.from(configuredSecret, 'utf8'))) throw new AppError('INVALID_SECRET');
}

/** Constant-time: hashing first makes both sides the same length, so length leaks nothing. */
export function secretMatches(given: Buffer, expected: Buffer): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
