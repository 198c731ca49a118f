import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

// V8 doubles its young generation under a burst of allocation, up to 16 MiB per semi-space on
// 64-bit Node 20, and keeps it: after 10,000 submissions that was 16 MiB of the server's resident
// size, for no measured gain in throughput (docs/limits-and-load.md "What one record costs").
// `--max-semi-space-size` is read only when the process starts; the growth factor is read at each
// growth, so the server stops the growth once the young generation holds CAP_BYTES.

/** Two semi-spaces of 8 MiB: where startup alone usually leaves it. */
export const YOUNG_GENERATION_CAP_BYTES = 16 * 1024 * 1024;

/** The young generation's size now (V8's `new_space`, both semi-spaces). */
export function youngGenerationBytes(): number {
  return v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}

/** Whether the process was started with its own young-generation size, which then stands. */
export function sizedByNodeOptions(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): boolean {
  return [...execArgv, ...nodeOptions.split(/\s+/)].some((flag) => /^--(max|min)[-_]semi[-_]space[-_]size/.test(flag));
}

/**
 * Stops the young generation growing past `capBytes`: at once if it is there already, else after
 * the collection that takes it there (growth happens only at a collection). Returns a stop for
 * the watch; the cap, once set, stays for the life of the process.
 */
export function capYoungGeneration(capBytes = YOUNG_GENERATION_CAP_BYTES): () => void {
  if (sizedByNodeOptions()) return () => undefined;
  const freeze = () => v8.setFlagsFromString('--semi-space-growth-factor=1');
  if (youngGenerationBytes() >= capBytes) {
    freeze();
    return () => undefined;
  }
  const watch = new PerformanceObserver(() => {
    if (youngGenerationBytes() < capBytes) return;
    freeze();
    watch.disconnect();
  });
  watch.observe({ entryTypes: ['gc'] });
  return () => watch.disconnect();
}
