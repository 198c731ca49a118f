import { AppError, errorMessage } from '../errors';
import type { Logger } from '../log';
import type { SubmitResult } from '../pipeline/submit-track';

// Tracks from a source client go through the same use case as POST /v1/remoteinput: sanitize,
// enrich, store, publish (docs/dj-software.md). The composition root (src/app/start-app.ts)
// hands the listener this one port.

/** Submits one track's fields as POST /v1/remoteinput does (the source's password already checked). */
export type SubmitFields = (fields: Record<string, string>) => Promise<SubmitResult>;

/** One line for a submission that failed; a refusal (4xx) is the client's, the rest is svc's. */
export function describeFailure(error: unknown): { status: number; message: string } {
  if (error instanceof AppError) return { status: error.status, message: error.expose ? error.message : 'Internal server error' };
  return { status: 500, message: errorMessage(error) };
}

export function describeTrack(fields: Readonly<Record<string, string>>): string {
  return JSON.stringify([fields.artist, fields.title].filter((part) => part !== undefined).join(' - '));
}

export function logFailure(logger: Logger, what: string, error: unknown): void {
  const { status, message } = describeFailure(error);
  if (status < 500) logger.warn(`${what}: not stored (${status} ${message})`);
  else logger.error(`${what}: not stored (${message})`);
}
