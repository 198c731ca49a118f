import { isLoopbackHost } from '../domain/host-names';
import type { FrozenConfig } from './schema';

// docs/security.md "A public name needs the secret": what makes svc reachable under a public
// name, and the refusal `svc serve` answers when that comes without a secret. Pure.

/** The settings that make svc reachable from other machines, each in the config's own words. */
export function publicNames(config: Pick<FrozenConfig, 'host' | 'allowedHosts' | 'trustProxy'>): string[] {
  const reasons: string[] = [];
  if (!isLoopbackHost(config.host)) reasons.push(`host ${config.host}`);
  if (config.allowedHosts.length > 0) reasons.push(`allowedHosts ${config.allowedHosts.join(', ')}`);
  if (config.trustProxy.length > 0) reasons.push(`trustProxy ${config.trustProxy.join(', ')}`);
  return reasons;
}

export type WritesExposure = { kind: 'guarded' } | { kind: 'open'; reasons: string[] } | { kind: 'refused'; message: string };

/**
 * Refused: a public name and no secret, unless `openWrites: true` says so on purpose (then
 * `open`, for a warning). Without the secret anyone who learns the URL a chat bot fetches can
 * put text on the overlay.
 */
export function writesExposure(config: Pick<FrozenConfig, 'host' | 'allowedHosts' | 'trustProxy' | 'secret' | 'openWrites'>): WritesExposure {
  const reasons = publicNames(config);
  if (reasons.length === 0 || config.secret !== '') return { kind: 'guarded' };
  if (config.openWrites) return { kind: 'open', reasons };
  return {
    kind: 'refused',
    message:
      `${reasons.join('; ')} without a secret: anyone who reaches svc under that name could submit tracks and put text on your overlay. ` +
      'Set a secret (`secret: "<a long random text>"` in the config, --secret or SVC_SECRET; `openssl rand -hex 16` makes one), ' +
      'or add `openWrites: true` to the config to keep writes open on purpose',
  };
}
