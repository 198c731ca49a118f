import { FINGERPRINT_FIELDS, IDENTIFYING_FIELDS, type TrackFields } from '../domain/track';
import { AppError } from '../errors';

// Stage 4: the minimum a submission must identify (docs/decisions.md). Pure.

export function requireIdentifyingField(fields: Readonly<TrackFields>): void {
  const present = (key: string) => fields[key] !== undefined && fields[key] !== '';
  if (IDENTIFYING_FIELDS.some(present)) return;
  if (FINGERPRINT_FIELDS.every(present)) return;
  throw new AppError('NO_IDENTIFYING_FIELD');
}
