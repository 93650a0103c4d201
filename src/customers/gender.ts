/**
 * `marketingGender`: inferred from the first name with Joerg Michael's name dictionary (nam_dict, ~48k first names
 * with their frequency per country; installed by the bootstrap from the PyPI package gender-guesser). The frequency
 * column of the customer's country is used when the name is known there (so Czech `Jan` is male, not the Dutch
 * female `Jan`), else the name's strongest column anywhere. Never stated by the customer (SPEC rule 4); absent for a
 * company customer.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot, toolVersions } from '../infra/tools.js';

export type MarketingGender = 'male' | 'female' | 'unknown';

export interface GenderInference {
  marketingGender?: MarketingGender;
  genderSource?: 'name_inference' | 'unknown';
  genderConfidence?: number;
}

/** Column of each country in nam_dict (its documented order: great_britain ... other_countries). */
const COUNTRY_COLUMNS: Record<string, number> = {
  GB: 0, IE: 1, US: 2, IT: 3, MT: 4, PT: 5, ES: 6, FR: 7, BE: 8, LU: 9, NL: 10, DE: 12, AT: 13, CH: 14, IS: 15, DK: 16, NO: 17,
  SE: 18, FI: 19, EE: 20, LV: 21, LT: 22, PL: 23, CZ: 24, SK: 25, HU: 26, RO: 27, BG: 28, BA: 29, HR: 30, XK: 31, MK: 32, ME: 33,
  RS: 34, SI: 35, AL: 36, GR: 37, RU: 38, BY: 39, MD: 40, UA: 41, AM: 42, AZ: 43, GE: 44, TR: 46, IL: 48, CN: 49, IN: 50, JP: 51,
  KR: 52, VN: 53,
};

/** Share of each label that speaks for `male` (the rest for `female`). */
const MALE_SHARE: Record<string, number> = { M: 1, '1M': 0.75, '?M': 0.75, F: 0, '1F': 0.25, '?F': 0.25, '?': 0.5 };

/** A name's entries: (male share, frequency per country column). */
type NameEntry = { male: number; frequencies: number[] };

/** Assigned a gender only when at least this sure; otherwise `unknown` (with the confidence reached). */
export const GENDER_CONFIDENCE_THRESHOLD = 0.8;

let dictionary: Map<string, NameEntry[]> | null = null;

/** Where the bootstrap installs the dictionary. */
export function nameDataPath(): string {
  const pin = (toolVersions() as unknown as { nameData: { dir: string; file: string } }).nameData;
  return join(projectRoot(), pin.dir, pin.file);
}

function parse(text: string): Map<string, NameEntry[]> {
  const names = new Map<string, NameEntry[]>();
  const add = (name: string, entry: NameEntry) => {
    const key = name.toLocaleLowerCase('und');
    const list = names.get(key) ?? [];
    list.push(entry);
    names.set(key, list);
  };
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (!line || line[0] === '#' || line[0] === '=') continue;
    const [label, name] = line.split(/\s+/);
    const male = MALE_SHARE[label];
    if (male === undefined || !name) continue;
    // Frequencies from column 30 up to the closing `$`: one hex digit (1..D, logarithmic) per country, blank = unseen.
    const columns = line.slice(30, line.lastIndexOf('$') === -1 ? undefined : line.lastIndexOf('$'));
    const frequencies = [...columns].map((c) => (c === ' ' ? 0 : parseInt(c, 16) || 0));
    const entry = { male, frequencies };
    // `+` joins the parts of a compound name, written together, with a space or with a hyphen.
    if (name.includes('+')) for (const joiner of ['', ' ', '-']) add(name.replaceAll('+', joiner), entry);
    else add(name, entry);
  }
  return names;
}

function loadDictionary(): Map<string, NameEntry[]> {
  if (dictionary) return dictionary;
  const path = nameDataPath();
  if (!existsSync(path)) throw new Error(`The first-name data set is missing at ${path}; run \`node scripts/bootstrap.mjs\`.`);
  dictionary = parse(readFileSync(path, 'utf8'));
  return dictionary;
}

/** Weighted male share of a name in one column (or its strongest column when `column` is undefined). */
function maleProbability(entries: NameEntry[], column: number | undefined): number | null {
  let male = 0;
  let total = 0;
  for (const e of entries) {
    const f = column === undefined ? Math.max(0, ...e.frequencies) : e.frequencies[column] ?? 0;
    if (f === 0) continue;
    // Frequencies are logarithmic (each step about doubles), so weigh by 2^f.
    const weight = 2 ** f;
    male += weight * e.male;
    total += weight;
  }
  return total === 0 ? null : male / total;
}

/** The inferred marketing gender of a customer; empty (every field absent) for a company customer. */
export function inferGender(firstName: string | null, company: string | null, country: string | null): GenderInference {
  if (company) return {};
  const first = firstName?.trim().split(/[\s-]+/)[0];
  const entries = first ? loadDictionary().get(first.toLocaleLowerCase('und')) : undefined;
  if (!entries) return { marketingGender: 'unknown', genderSource: 'unknown', genderConfidence: 0 };
  const column = country ? COUNTRY_COLUMNS[country] : undefined;
  const p = (column !== undefined ? maleProbability(entries, column) : null) ?? maleProbability(entries, undefined);
  if (p === null) return { marketingGender: 'unknown', genderSource: 'unknown', genderConfidence: 0 };
  const confidence = Math.round(Math.max(p, 1 - p) * 100) / 100;
  if (confidence < GENDER_CONFIDENCE_THRESHOLD) return { marketingGender: 'unknown', genderSource: 'name_inference', genderConfidence: confidence };
  return { marketingGender: p >= 0.5 ? 'male' : 'female', genderSource: 'name_inference', genderConfidence: confidence };
}
