// The two rules of report text every layout shares (docs/reports.md "Names in the files"): a
// cell a spreadsheet would run as a formula, and the ASCII spelling of a name. In the domain
// because the stored report marks (recording.ts) say which plays have either. Pure.

/**
 * The first characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection":
 * `=`, `+`, `-`, `@`, tab and carriage return), in docs/reports.md "Names in the files".
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** Whether a cell would start a formula when a spreadsheet opens the file. */
export const startsFormula = (value: string | undefined): boolean => value !== undefined && FORMULA_START.test(value);

/** OWASP's neutralisation: a single quote before a cell that would start a formula. */
export function neutralised(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** Letters NFD does not take apart into a base letter and marks, spelled in ASCII. */
const ASCII_SPELLINGS: Record<string, string> = {
  ß: 'ss',
  Æ: 'AE',
  æ: 'ae',
  Ø: 'O',
  ø: 'o',
  Œ: 'OE',
  œ: 'oe',
  Þ: 'Th',
  þ: 'th',
  Ð: 'D',
  ð: 'd',
  Đ: 'D',
  đ: 'd',
  Ł: 'L',
  ł: 'l',
  ı: 'i',
  Ħ: 'H',
  ħ: 'h',
  '\u2018': "'",
  '\u2019': "'",
  '\u201a': "'",
  '\u201c': '"',
  '\u201d': '"',
  '\u201e': '"',
  '\u2013': '-',
  '\u2014': '-',
  '\u2026': '...',
  '\u00a0': ' ',
  '\u00d7': 'x',
};

/**
 * Cyrillic and Greek letters as ICAO Doc 9303 (machine-readable travel documents, part 3,
 * section 6) spells them in ASCII: a rule a passport office applies, so the same name always
 * comes out the same. Lower case here; an upper-case letter writes its first letter upper-cased.
 */
const ICAO_9303: Record<string, string> = {
  а: 'a',
  б: 'b',
  в: 'v',
  г: 'g',
  д: 'd',
  е: 'e',
  ё: 'e',
  ж: 'zh',
  з: 'z',
  и: 'i',
  й: 'i',
  к: 'k',
  л: 'l',
  м: 'm',
  н: 'n',
  о: 'o',
  п: 'p',
  р: 'r',
  с: 's',
  т: 't',
  у: 'u',
  ф: 'f',
  х: 'kh',
  ц: 'ts',
  ч: 'ch',
  ш: 'sh',
  щ: 'shch',
  ъ: 'ie',
  ы: 'y',
  ь: '',
  э: 'e',
  ю: 'iu',
  я: 'ia',
  є: 'ie',
  і: 'i',
  ї: 'i',
  ґ: 'g',
  ў: 'u',
  ђ: 'd',
  ј: 'j',
  љ: 'lj',
  њ: 'nj',
  ћ: 'c',
  џ: 'dz',
  ѓ: 'g',
  ќ: 'k',
  ѕ: 'dz',
  α: 'a',
  β: 'v',
  γ: 'g',
  δ: 'd',
  ε: 'e',
  ζ: 'z',
  η: 'i',
  θ: 'th',
  ι: 'i',
  κ: 'k',
  λ: 'l',
  μ: 'm',
  ν: 'n',
  ξ: 'x',
  ο: 'o',
  π: 'p',
  ρ: 'r',
  σ: 's',
  ς: 's',
  τ: 't',
  υ: 'y',
  φ: 'f',
  χ: 'ch',
  ψ: 'ps',
  ω: 'o',
};

/** A letter of another script in ASCII (ICAO 9303), or undefined. */
function icaoSpelling(char: string): string | undefined {
  const lower = char.toLowerCase();
  const spelled = ICAO_9303[lower];
  if (spelled === undefined || lower === char) return spelled;
  return spelled.charAt(0).toUpperCase() + spelled.slice(1);
}

/**
 * The ASCII spelling of a name (docs/reports.md "Names in the files"): marks taken off their letters
 * (`Rós` -> `Ros`), a few letters and punctuation spelled out (`ß` -> `ss`, `—` -> `-`), Cyrillic
 * and Greek by ICAO 9303 (`Дельфин` -> `Delfin`), and what has no ASCII spelling (Han, Arabic,
 * ...) as `?`. `untransliterable` says whether any was.
 */
export function asciiSpelling(value: string): { text: string; untransliterable: boolean } {
  // Most names are ASCII already: one test instead of a normalisation.
  // eslint-disable-next-line no-control-regex
  if (/^[\u0000-\u007f]*$/.test(value)) return { text: value, untransliterable: false };
  let untransliterable = false;
  let text = '';
  for (const char of value.normalize('NFD')) {
    if (/\p{M}/u.test(char)) continue;
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x80) text += char;
    else if (ASCII_SPELLINGS[char] !== undefined) text += ASCII_SPELLINGS[char];
    else if (icaoSpelling(char) !== undefined) text += icaoSpelling(char);
    else {
      untransliterable = true;
      text += '?';
    }
  }
  return { text, untransliterable };
}
