/** Demo customers: derived from (seed, shop, customer number) alone, so returning customers need no pool in memory. */
import { createHash } from 'node:crypto';
import { PEOPLE, type ShopDefinition } from './catalogue.js';
import { createRandom, type Random } from './random.js';
import type { GeneratedCustomer } from './types.js';

const COMPANY_WORDS = ['Trade', 'Servis', 'Group', 'Design', 'Home', 'Gastro', 'Invest', 'Partner'];

/** D22 customer key: lower-case hex SHA-256 of the trimmed, lower-cased e-mail. */
export function customerEmailHash(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
}

/** ASCII form of a name for an e-mail address (diacritics dropped; Polish ł has no decomposition). */
function asciiFold(text: string): string {
  return text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/ł/g, 'l').replace(/Ł/g, 'L').toLowerCase().replace(/[^a-z0-9]/g, '');
}

function weightedBy<T extends { weight: number }>(rng: Random, items: T[]): T {
  return rng.weighted(items, items.map((i) => i.weight));
}

/** The customer with the given number in a shop; the same number always yields the same person. */
export function customerAt(seed: number, shop: ShopDefinition, index: number): GeneratedCustomer {
  const rng = createRandom(seed, 'customer', shop.code, index);
  const country = rng.chance(0.95) ? shop.country : rng.pick(shop.neighbours);
  const people = PEOPLE[country];
  const female = rng.chance(0.56);
  const firstName = rng.pick(female ? people.femaleFirstNames : people.maleFirstNames);
  const lastPair = rng.pick(people.lastNames);
  const lastName = female ? lastPair[1] : lastPair[0];
  const company = rng.chance(0.1) ? `${lastPair[0]} ${rng.pick(COMPANY_WORDS)} ${people.companyForm}` : null;
  const f = asciiFold(firstName);
  const l = asciiFold(lastName);
  // The customer number keeps addresses unique, so "new customer" really means a new e-mail.
  const n = index + 1;
  const local = rng.weighted([`${f}.${l}${n}`, `${l}.${f}${n}`, `${f[0]}${l}${n}`, `${f}${n}`], [5, 2, 2, 1]);
  const domain = company && rng.chance(0.5) ? `${l}-${country.toLowerCase()}.com` : weightedBy(rng, people.emailDomains).domain;
  const city = weightedBy(rng, people.cities);
  const house = country === 'SK' || country === 'CZ' ? `${rng.int(1, 3200)}/${rng.int(1, 80)}` : String(rng.int(1, 140));
  const phoneGroups = people.phone.groups.map((g) => rng.digits(g)).join(' ');
  return {
    firstName, lastName, company,
    email: `${local}@${domain}`,
    phone: `${people.phone.prefix} ${rng.pick(people.phone.mobile)} ${phoneGroups}`,
    street: `${rng.pick(people.streets)} ${house}`,
    city: city.name, zip: city.zip, country,
  };
}

/** The e-mail as typed on one order: now and then with capitals, which the D22 key must see through. */
export function emailAsTyped(rng: Random, email: string): string {
  if (!rng.chance(0.05)) return email;
  const [local, domain] = email.split('@');
  return `${local.charAt(0).toUpperCase()}${local.slice(1)}@${domain.charAt(0).toUpperCase()}${domain.slice(1)}`;
}
