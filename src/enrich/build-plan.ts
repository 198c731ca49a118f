import type { FrozenConfig } from '../config/schema';
import type { EnrichmentPlan } from './enricher';

/**
 * The enrichers this configuration enables, in stage order. With `enrichment.enabled: false`
 * the plan is empty and no outbound request is ever made.
 */
export function buildEnrichmentPlan(config: FrozenConfig): EnrichmentPlan {
  if (!config.enrichment.enabled) return [];
  // The outside-service providers are added here stage by stage as they are written.
  return [];
}
