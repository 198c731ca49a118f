import type { FieldValue, TrackFields } from './track';

// How enrichment results join a submission: a provider only fills what is still empty,
// so it never overwrites what the submitter sent or what an earlier provider found. Pure.

export interface Merged {
  fields: TrackFields;
  /** Field name -> provider that supplied it. */
  sources: Record<string, string>;
}

/** `fieldSources` names another provider for some fields (field -> provider); `provider` for the rest. */
export function fillEmptyFields(base: Merged, addition: Readonly<TrackFields>, provider: string, fieldSources: Readonly<Record<string, string>> = {}): Merged {
  const fields: TrackFields = { ...base.fields };
  const sources = { ...base.sources };
  for (const [key, value] of Object.entries(addition)) {
    if (isEmpty(value) || !isEmpty(fields[key])) continue;
    fields[key] = value;
    sources[key] = Object.hasOwn(fieldSources, key) ? (fieldSources[key] ?? provider) : provider;
  }
  return { fields, sources };
}

export function isEmpty(value: FieldValue | undefined): boolean {
  if (value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}
