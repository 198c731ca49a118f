import { AppError } from '../../src/errors';

/** The AppError code `run` throws, undefined when it returns; any other error is rethrown. */
export function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
  return undefined;
}
