import { AppError, errorMessage } from '../errors';
import type { Logger } from '../log';
import { submitTrack, type SubmitDeps, type SubmitResult } from '../pipeline/submit-track';

// Tracks from a source client go through the same use case as POST /v1/remoteinput: sanitize,
// enrich, store, publish (docs/dj-software.md). The listener has checked the source's password
// already, so the pipeline's own secret check is not asked again.

/** What the HTTP server lends the listener: the use case's dependencies and its bookkeeping. */
export interface SubmissionPort {
  deps: SubmitDeps;
  nextReceivedSeq(): Promise<number>;
  /** Lets the server's shutdown wait for the submission. */
  trackInFlight<T>(work: Promise<T>): Promise<T>;
}

export type SubmitFields = (fields: Record<string, string>) => Promise<SubmitResult>;

export function createSubmitter(port: SubmissionPort): SubmitFields {
  const deps: SubmitDeps = { ...port.deps, secret: '' };
  return async (fields) => {
    const receivedSeq = await port.nextReceivedSeq();
    return port.trackInFlight(submitTrack({ method: 'POST', query: {}, body: fields, authHeader: '' }, receivedSeq, deps));
  };
}

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
