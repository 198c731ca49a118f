// The metrics port (docs/running.md "Metrics"): what a part of svc counts, named once, without
// knowing who exports it. The composition root hands the Prometheus registry's port
// (server/metrics.ts) to the parts that count, or NO_METRICS when metrics are off. A new part (song
// recognition, say) asks the port for its own counter with a name and a help text.

export type Labels = Readonly<Record<string, string>>;

export interface CounterPort {
  inc(labels?: Labels, value?: number): void;
}

/** What a gauge reads at each scrape: one value per label set. */
export type GaugeReading = Iterable<readonly [Labels, number]>;

export interface MetricsPort {
  /** A counter named `svc_<what>_total` (Prometheus naming), with these label names. */
  counter(name: string, help: string, labelNames?: readonly string[]): CounterPort;
  /** A gauge whose values are read when metrics are scraped. */
  gauge(name: string, help: string, labelNames: readonly string[], read: () => GaugeReading | Promise<GaugeReading>): void;
}

const NO_COUNTER: CounterPort = { inc: () => undefined };

/** Metrics off: counting costs a no-op call. */
export const NO_METRICS: MetricsPort = {
  counter: () => NO_COUNTER,
  gauge: () => undefined,
};
