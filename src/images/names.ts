// How artist and album names are matched when an image client asks for them (get_images,
// list_images): "Björk", "bjork" and "BJÖRK " are the same artist. Pure.

/** Lower case, accents and punctuation removed, spaces squeezed out; '' for nothing left. */
export function nameKey(name: string): string {
  const folded = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  const key = folded.replace(/[^\p{L}\p{N}]+/gu, '');
  // A name made only of symbols ("!!!") still deserves a key of its own.
  return key === '' ? folded.replace(/\s+/gu, '') : key;
}
