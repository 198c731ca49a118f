import type { Logger } from '../../src/log';

/** A logger that keeps nothing, for tests that do not read the log. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
