import type { OutputHealth } from '../../store/outputs';
import type { Output } from '../output';

// An output's status for GET /v1/outputs and `svc outputs` (docs/outputs.md "Delivery"), from its
// queue's health. Pure.

export type OutputState = 'ok' | 'retrying' | 'failing';

export interface OutputStatus {
  name: string;
  type: string;
  target: string;
  state: OutputState;
  lastSuccess: { at: string; dbid: number; receipt?: string } | null;
  pending: number;
  /** Messages skipped for a newer one (current-state targets). */
  superseded: number;
  lastError: { at: string; message: string } | null;
}

export function statusOf(output: Output, health: OutputHealth): OutputStatus {
  const state: OutputState = health.lastFinishedFailed && !health.retrying ? 'failing' : health.retrying ? 'retrying' : 'ok';
  return {
    name: output.name,
    type: output.type,
    target: output.target,
    state,
    lastSuccess: health.lastSuccess
      ? {
          at: new Date(health.lastSuccess.at).toISOString(),
          dbid: health.lastSuccess.dbid,
          ...(health.lastSuccess.receipt ? { receipt: health.lastSuccess.receipt } : {}),
        }
      : null,
    pending: health.pending,
    superseded: health.superseded,
    lastError: health.lastError ? { at: new Date(health.lastError.at).toISOString(), message: health.lastError.message } : null,
  };
}
