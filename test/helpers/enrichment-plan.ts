import type { Config } from '../../src/config/schema';
import { buildEnrichmentPlan } from '../../src/enrich/build-plan';
import type { Enricher, EnrichmentPlan } from '../../src/enrich/enricher';
import { createLogger } from '../../src/log';
import { openSqliteStore } from '../../src/store/open-store';
import type { Store } from '../../src/store/store';
import { enrichmentConfig, type FakeServices } from '../fakes/services';
import { testConfig, type DeepPartial } from './test-server';

export interface TestPlan {
  plan: EnrichmentPlan;
  /** The enricher of that name in the plan (fails the test when absent). */
  enricher(name: string): Enricher;
  store: Store;
  logs: string[];
  close(): Promise<void>;
}

/** The real plan of a config pointing at the fakes, with its own in-memory cache. */
export function planAgainstFakes(fakes: FakeServices, enrichment: DeepPartial<Config['enrichment']> = {}): TestPlan {
  const store = openSqliteStore(':memory:', { maxImageBytes: 1024 * 1024 });
  const logs: string[] = [];
  const config = testConfig(enrichmentConfig(fakes, enrichment), ':memory:');
  const plan = buildEnrichmentPlan(config, { lookupCache: store.lookupCache, logger: createLogger((line) => logs.push(line)) });
  return {
    plan,
    enricher(name) {
      const found = plan.flat().find((candidate) => candidate.name === name);
      if (!found) throw new Error(`no enricher ${name} in the plan`);
      return found;
    },
    store,
    logs,
    close: () => store.close(),
  };
}

export const noDeadline = (): { signal: AbortSignal } => ({ signal: new AbortController().signal });
