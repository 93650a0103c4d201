/**
 * Search-console performance rows of a demo shop: per local day, rows by query, page, country and device. Each
 * completed daily run (src/platforms/demo/searchConsole.ts) delivers yesterday and the day before as `fresh` data and
 * the day three days back as `final`; a final row replaces the fresh one of the same key (its figures settle a little).
 * A pure function of (seed, shop, day, state) on its own random streams (`sc-rows`, `sc-fresh`).
 */
import { categoryPageUrl, productPageUrl, type ShopDefinition } from './catalogue.js';
import type { GeneratedCatalogue } from './types.js';
import { createRandom } from './random.js';
import { DAY_MS } from './time.js';
import type { GeneratedSearchConsoleRun } from './types.js';
import type { SearchConsoleRow as GeneratedSearchConsoleRow, SearchConsoleDay as GeneratedSearchConsoleDay } from '../../records/types.js';
export type { GeneratedSearchConsoleRow, GeneratedSearchConsoleDay };

const ALPHA3: Record<string, string> = { SK: 'svk', CZ: 'cze', HU: 'hun', PL: 'pol', AT: 'aut', DE: 'deu', UA: 'ukr' };
const DEVICES: Array<['desktop' | 'mobile' | 'tablet', number]> = [['mobile', 0.6], ['desktop', 0.35], ['tablet', 0.05]];

interface Term { query: string; page: string; weight: number; position: number }

/** The shop's search terms: its brand, its categories and a handful of products, each with a landing page. */
function terms(shop: ShopDefinition, catalogue: GeneratedCatalogue): Term[] {
  const host = new URL(shop.baseUrl).hostname.replace(/^www\./, '');
  const brand = host.split('.')[0].replace(/-/g, ' ');
  const out: Term[] = [
    { query: brand, page: `${shop.baseUrl}/`, weight: 30, position: 1.2 },
    { query: host, page: `${shop.baseUrl}/`, weight: 8, position: 1.1 },
  ];
  catalogue.categories.filter((c) => c.parentGuid === null).slice(0, 6).forEach((c, i) => {
    out.push({ query: c.name.toLowerCase(), page: categoryPageUrl(shop, c.guid), weight: 10 - i, position: 6 + i * 1.5 });
  });
  catalogue.products.slice(0, 8).forEach((p, i) => {
    out.push({ query: p.name.toLowerCase(), page: productPageUrl(shop, p.code), weight: 5 - i * 0.4, position: 4 + i });
  });
  return out;
}

/** The rows of one day in one data state. */
export function searchConsoleDay(seed: number, shop: ShopDefinition, catalogue: GeneratedCatalogue, localDate: number, dataState: 'fresh' | 'final'): GeneratedSearchConsoleDay {
  const rng = createRandom(seed, 'sc-rows', shop.code, localDate);
  // Fresh figures are a little lower than the final ones (late impressions still arrive).
  const settle = createRandom(seed, 'sc-fresh', shop.code, localDate);
  const countries = [ALPHA3[shop.country] ?? shop.country.toLowerCase(), ...shop.neighbours.slice(0, 1).map((c) => ALPHA3[c] ?? c.toLowerCase())];
  const rows: GeneratedSearchConsoleRow[] = [];
  const dailyImpressions = 900 * rng.float(0.8, 1.2);
  const weightSum = terms(shop, catalogue).reduce((n, t) => n + t.weight, 0);
  for (const term of terms(shop, catalogue)) {
    countries.forEach((country, ci) => {
      for (const [device, share] of DEVICES) {
        const base = dailyImpressions * (term.weight / weightSum) * share * (ci === 0 ? 0.92 : 0.08) * rng.float(0.7, 1.3);
        const factor = dataState === 'final' ? 1 : settle.float(0.85, 0.98);
        const impressions = Math.round(base * factor);
        if (impressions === 0) continue;
        const position = Math.max(1, term.position * rng.float(0.8, 1.25));
        const ctr = Math.min(0.6, 0.32 / position ** 0.9) * rng.float(0.8, 1.2);
        const clicks = Math.min(impressions, Math.round(impressions * ctr));
        rows.push({ query: term.query, page: term.page, country, device, clicks, impressions, position: Math.round(position * 100) / 100 });
      }
    });
  }
  return { day: new Date(localDate).toISOString().slice(0, 10), dataState, rows };
}

/** The days a completed run delivers: yesterday and the day before fresh, three days back final. */
export function daysOfRun(run: GeneratedSearchConsoleRun): Array<{ localDate: number; dataState: 'fresh' | 'final' }> {
  if (run.status !== 'completed') return [];
  const runDay = Date.parse(`${run.key}T00:00:00Z`);
  return [
    { localDate: runDay - 3 * DAY_MS, dataState: 'final' },
    { localDate: runDay - 2 * DAY_MS, dataState: 'fresh' },
    { localDate: runDay - DAY_MS, dataState: 'fresh' },
  ];
}
