// How a play that recognition made is named where people read it (docs/recognition.md "A
// recognised play"): `svc history`'s text lines and `svc report check`'s notes. The fields are
// the record's `recognition`, `recognition_score` and `recognition_rate`; pure.

/** The score and rate a record's fields hold, or null when recognition did not make it. */
export function recognitionOf(fields: Readonly<Record<string, unknown>>): { score: number | null; rate: number | null } | null {
  if (typeof fields.recognition !== 'string' || fields.recognition === '') return null;
  return { score: numberOf(fields.recognition_score), rate: numberOf(fields.recognition_rate) };
}

function numberOf(value: unknown): number | null {
  const parsed = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isFinite(parsed) ? parsed : null;
}

/** `recognised 0.953`, `recognised 0.953 at +5.0 %` (a deck off pitch), `recognised` without a score. */
export function recognitionLabel(score: number | null, rate: number | null): string {
  const parts = ['recognised'];
  if (score !== null) parts.push(score.toFixed(3));
  if (rate !== null && rate !== 1) parts.push(`at ${rate > 1 ? '+' : '-'}${(Math.abs(rate - 1) * 100).toFixed(1)} %`);
  return parts.join(' ');
}
