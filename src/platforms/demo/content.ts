/**
 * The demo shops' catalogue content: product and category texts that the shop's staff revise now and then, each
 * product's availability, the availability dictionary, what the platform lets the service write, and the shop's
 * content pages and blog articles. Like orders, everything is a pure function of (seed, shop, time) — texts change on
 * their own revision instants, articles appear on their publication days — and draws only from new named streams.
 */
import type { Language, ShopDefinition } from './catalogue.js';
import type { CatalogueModel } from './generateCatalogue.js';
import { createRandom } from './random.js';
import { DAY_MS, HOUR_MS } from './time.js';
import type { CatalogueRecord } from '../types.js';
import type { ProductTextField, CategoryTextField, AvailabilityReason, ContentCapabilities as GeneratedContentCapabilities, Availability as GeneratedAvailability, ProductTexts as GeneratedProductTexts, CategoryTexts as GeneratedCategoryTexts, Article as GeneratedArticle } from '../../records/types.js';
import { PRODUCT_TEXT_FIELDS, CATEGORY_TEXT_FIELDS } from '../../records/types.js';
export type { ProductTextField, CategoryTextField, AvailabilityReason, GeneratedContentCapabilities, GeneratedAvailability, GeneratedProductTexts, GeneratedCategoryTexts, GeneratedArticle };
export { PRODUCT_TEXT_FIELDS, CATEGORY_TEXT_FIELDS };

/**
 * Platforms differ (D20): the four demo shops between them show a manageable dictionary and all three reasons why not.
 * `sk` runs the full platform; `cz` lacks the extension that manages the dictionary; `hu`'s platform does not allow
 * it and writes only SEO texts; `pl` is connected to a test environment.
 */
const CAPABILITIES: Record<string, GeneratedContentCapabilities> = {
  sk: { productFields: [...PRODUCT_TEXT_FIELDS], categoryFields: [...CATEGORY_TEXT_FIELDS], availabilityManageable: true, availabilityReason: null },
  cz: { productFields: ['description', 'shortDescription'], categoryFields: ['description'], availabilityManageable: false, availabilityReason: 'BEZ_ROZSIRENIA' },
  hu: { productFields: ['metaTitle', 'metaDescription'], categoryFields: [], availabilityManageable: false, availabilityReason: 'PLATFORMA' },
  pl: { productFields: [...PRODUCT_TEXT_FIELDS], categoryFields: [...CATEGORY_TEXT_FIELDS], availabilityManageable: false, availabilityReason: 'PROSTREDIE' },
};

export function contentCapabilities(shop: ShopDefinition): GeneratedContentCapabilities {
  return CAPABILITIES[shop.code] ?? CAPABILITIES.sk;
}

type Words = {
  availability: Array<[string, string, string]>;
  features: string[];
  suitable: string;
  category: (name: string) => string;
  categoryBottom: (name: string) => string;
  articleTitles: string[];
  articleText: (title: string, product: string) => string;
  pages: Array<[string, string, string]>;
};

/** Wording per shop language: [name, description, slug] of availabilities, phrases of texts and articles. */
const WORDS: Record<Language, Words> = {
  sk: {
    availability: [['Skladom', 'Tovar je pripravený na odoslanie.', ''], ['Do 3 dní', 'Tovar dorazí od dodávateľa do troch dní.', ''], ['Na objednávku', 'Objednáme u výrobcu.', ''], ['Predpredaj', 'Novinka v predpredaji.', ''], ['Vypredané', 'Momentálne nedostupné.', '']],
    features: ['Odolný materiál, ktorý vydrží roky.', 'Ľahká údržba, možno umývať v umývačke.', 'Štýlový dizajn do každej kuchyne.', 'Overená kvalita za férovú cenu.'],
    suitable: 'Vhodné na každodenné použitie.',
    category: (n) => `<p>${n}: starostlivo vybraný sortiment pre váš domov.</p>`,
    categoryBottom: (n) => `<p>Ako vybrať ${n.toLowerCase()}? Poradíme vám v našom blogu.</p>`,
    articleTitles: ['Ako vybrať panvicu', 'Jesenné práce v záhrade', 'Tipy na pečenie chleba', 'Starostlivosť o nože', 'Príprava kávy doma', 'Stolovanie na sviatky'],
    articleText: (title, product) => `<p>${title}. Vyskúšajte napríklad ${product}. Čítajte ďalej a nájdite inšpiráciu.</p>`,
    pages: [['O nás', '<p>Sme rodinný obchod s tovarom pre domácnosť.</p>', 'o-nas'], ['Doprava a platba', '<p>Doručujeme po celom Slovensku.</p>', 'doprava-a-platba'], ['Reklamácie a vrátenie', '<p>Tovar môžete vrátiť do 14 dní.</p>', 'reklamacie']],
  },
  cs: {
    availability: [['Skladem', 'Zboží je připravené k odeslání.', ''], ['Do 3 dnů', 'Zboží dorazí od dodavatele do tří dnů.', ''], ['Na objednávku', 'Objednáme u výrobce.', ''], ['Předprodej', 'Novinka v předprodeji.', ''], ['Vyprodáno', 'Momentálně nedostupné.', '']],
    features: ['Odolný materiál, který vydrží roky.', 'Snadná údržba, lze mýt v myčce.', 'Stylový design do každé kuchyně.', 'Ověřená kvalita za férovou cenu.'],
    suitable: 'Vhodné pro každodenní použití.',
    category: (n) => `<p>${n}: pečlivě vybraný sortiment pro váš domov.</p>`,
    categoryBottom: (n) => `<p>Jak vybrat ${n.toLowerCase()}? Poradíme vám na našem blogu.</p>`,
    articleTitles: ['Jak vybrat pánev', 'Podzimní práce na zahradě', 'Tipy na pečení chleba', 'Péče o nože', 'Příprava kávy doma', 'Stolování o svátcích'],
    articleText: (title, product) => `<p>${title}. Vyzkoušejte například ${product}. Čtěte dál a najděte inspiraci.</p>`,
    pages: [['O nás', '<p>Jsme rodinný obchod se zbožím pro domácnost.</p>', 'o-nas'], ['Doprava a platba', '<p>Doručujeme po celé České republice.</p>', 'doprava-a-platba'], ['Reklamace a vrácení', '<p>Zboží můžete vrátit do 14 dnů.</p>', 'reklamace']],
  },
  hu: {
    availability: [['Raktáron', 'A termék szállításra kész.', ''], ['3 napon belül', 'A termék három napon belül érkezik a beszállítótól.', ''], ['Rendelésre', 'A gyártótól rendeljük.', ''], ['Előrendelés', 'Újdonság előrendelésben.', ''], ['Elfogyott', 'Jelenleg nem elérhető.', '']],
    features: ['Tartós anyag, amely évekig kitart.', 'Könnyű tisztítás, mosogatógépben mosható.', 'Stílusos dizájn minden konyhába.', 'Megbízható minőség kedvező áron.'],
    suitable: 'Mindennapi használatra ajánlott.',
    category: (n) => `<p>${n}: gondosan válogatott kínálat az otthonába.</p>`,
    categoryBottom: (n) => `<p>Hogyan válasszon: ${n.toLowerCase()}? Blogunkban segítünk.</p>`,
    articleTitles: ['Hogyan válasszunk serpenyőt', 'Őszi kerti munkák', 'Tippek kenyérsütéshez', 'A kések ápolása', 'Kávéfőzés otthon', 'Ünnepi terítés'],
    articleText: (title, product) => `<p>${title}. Próbálja ki például: ${product}. Olvasson tovább, és találjon ihletet.</p>`,
    pages: [['Rólunk', '<p>Családi háztartási bolt vagyunk.</p>', 'rolunk'], ['Szállítás és fizetés', '<p>Egész Magyarországon szállítunk.</p>', 'szallitas-es-fizetes'], ['Reklamáció és visszaküldés', '<p>A terméket 14 napon belül visszaküldheti.</p>', 'reklamacio']],
  },
  pl: {
    availability: [['Dostępny', 'Towar gotowy do wysyłki.', ''], ['Do 3 dni', 'Towar dotrze od dostawcy w ciągu trzech dni.', ''], ['Na zamówienie', 'Zamawiamy u producenta.', ''], ['Przedsprzedaż', 'Nowość w przedsprzedaży.', ''], ['Wyprzedane', 'Chwilowo niedostępny.', '']],
    features: ['Wytrzymały materiał, który posłuży latami.', 'Łatwa pielęgnacja, można myć w zmywarce.', 'Stylowy design do każdej kuchni.', 'Sprawdzona jakość w uczciwej cenie.'],
    suitable: 'Odpowiedni do codziennego użytku.',
    category: (n) => `<p>${n}: starannie wybrany asortyment dla Twojego domu.</p>`,
    categoryBottom: (n) => `<p>Jak wybrać: ${n.toLowerCase()}? Doradzimy na naszym blogu.</p>`,
    articleTitles: ['Jak wybrać patelnię', 'Jesienne prace w ogrodzie', 'Porady dotyczące pieczenia chleba', 'Pielęgnacja noży', 'Parzenie kawy w domu', 'Nakrywanie stołu na święta'],
    articleText: (title, product) => `<p>${title}. Wypróbuj na przykład ${product}. Czytaj dalej i znajdź inspirację.</p>`,
    pages: [['O nas', '<p>Jesteśmy rodzinnym sklepem z artykułami domowymi.</p>', 'o-nas'], ['Dostawa i płatność', '<p>Dostarczamy na terenie całej Polski.</p>', 'dostawa-i-platnosc'], ['Reklamacje i zwroty', '<p>Towar możesz zwrócić w ciągu 14 dni.</p>', 'reklamacje']],
  },
};

const AVAILABILITY_SHAPE: Array<Omit<GeneratedAvailability, 'name' | 'description' | 'position'>> = [
  { id: 'in-stock', onStockHours: 0, deliveryHours: 24, meaning: 'in_stock', color: '#2e7d32', system: true, defaultRoles: ['in_stock'], pairingRows: 3 },
  { id: 'days-3', onStockHours: 72, deliveryHours: 96, meaning: 'backorder', color: '#f9a825', system: false, defaultRoles: [], pairingRows: 1 },
  { id: 'to-order', onStockHours: 240, deliveryHours: 264, meaning: 'backorder', color: '#ef6c00', system: false, defaultRoles: ['supplier_stock'], pairingRows: 2 },
  { id: 'preorder', onStockHours: null, deliveryHours: null, meaning: 'preorder', color: '#1565c0', system: false, defaultRoles: [], pairingRows: 0 },
  { id: 'sold-out', onStockHours: null, deliveryHours: null, meaning: 'out_of_stock', color: '#c62828', system: true, defaultRoles: ['out_of_stock'], pairingRows: 1 },
];

/** The shop's availability dictionary (it does not change by itself; the service may write it where manageable). */
export function availabilityDictionary(shop: ShopDefinition): GeneratedAvailability[] {
  const words = WORDS[shop.language];
  return AVAILABILITY_SHAPE.map((a, i) => ({ ...a, name: words.availability[i][0], description: words.availability[i][1], position: i + 1 }));
}

/** Revision instants of one text: its creation, then a revision every few weeks to months, on into the future. */
function revisionTimes(seed: number, shopCode: string, key: string, createdMs: number, untilMs: number, meanDays: number): number[] {
  const rng = createRandom(seed, 'content-revisions', shopCode, key);
  const times = [createdMs];
  for (;;) {
    const next = times[times.length - 1] + Math.round(rng.float(0.3, 1.7) * meanDays * DAY_MS + rng.int(0, 8 * HOUR_MS));
    if (next > untilMs) return times;
    times.push(next);
  }
}

/** The index of the revision in force at `atMs`, or -1 before the first. */
function revisionAt(times: number[], atMs: number): number {
  let r = -1;
  for (let i = 0; i < times.length && times[i] <= atMs; i++) r = i;
  return r;
}

const PRODUCT_REVISION_DAYS = 75;
const CATEGORY_REVISION_DAYS = 200;

/** A product's texts and availability as revision `r` wrote them. */
function productRevision(seed: number, shop: ShopDefinition, model: CatalogueModel, index: number, r: number, atMs: number): GeneratedProductTexts {
  const p = model.products[index].product;
  const words = WORDS[shop.language];
  const rng = createRandom(seed, 'content-text', shop.code, p.code, r);
  const category = model.catalogue.categories.find((c) => c.guid === p.categoryGuid)?.name ?? '';
  const feature = rng.pick(words.features);
  const second = rng.pick(words.features);
  const texts: Record<ProductTextField, string | null> = {
    description: `<p><strong>${p.name}</strong> – ${category}.</p><p>${feature} ${second === feature ? '' : `${second} `}${words.suitable}</p>`,
    shortDescription: rng.chance(0.85) ? `${p.name}. ${feature}` : null,
    metaTitle: `${p.name} | ${shop.name}`,
    metaDescription: rng.chance(0.7) ? `${p.name}: ${feature.toLowerCase()}` : null,
  };
  const availabilityId = rng.weighted(AVAILABILITY_SHAPE.map((a) => a.id), [70, 12, 10, 3, 5]);
  return { code: p.code, availabilityId, texts, updatedAt: new Date(atMs) };
}

/** Product texts that changed in (since, until] — every product on a first read — as they stand at `until`. */
export function productTextsChanged(seed: number, shop: ShopDefinition, model: CatalogueModel, sinceMs: number | null, untilMs: number): GeneratedProductTexts[] {
  const out: GeneratedProductTexts[] = [];
  model.products.forEach((pm, index) => {
    const times = revisionTimes(seed, shop.code, `product|${pm.product.code}`, pm.createdAtMs, untilMs, PRODUCT_REVISION_DAYS);
    const r = revisionAt(times, untilMs);
    if (r < 0 || (sinceMs !== null && times[r] <= sinceMs)) return;
    out.push(productRevision(seed, shop, model, index, r, times[r]));
  });
  return out;
}

/** Category texts that changed in (since, until], as they stand at `until`. */
export function categoryTextsChanged(seed: number, shop: ShopDefinition, model: CatalogueModel, sinceMs: number | null, untilMs: number): GeneratedCategoryTexts[] {
  const words = WORDS[shop.language];
  const out: GeneratedCategoryTexts[] = [];
  for (const c of model.catalogue.categories) {
    const times = revisionTimes(seed, shop.code, `category|${c.guid}`, c.createdAt.getTime(), untilMs, CATEGORY_REVISION_DAYS);
    const r = revisionAt(times, untilMs);
    if (r < 0 || (sinceMs !== null && times[r] <= sinceMs)) continue;
    const rng = createRandom(seed, 'content-text', shop.code, c.guid, r);
    out.push({
      guid: c.guid,
      texts: {
        description: words.category(c.name),
        descriptionBottom: rng.chance(0.6) ? words.categoryBottom(c.name) : null,
        metaTitle: `${c.name} | ${shop.name}`,
        metaDescription: rng.chance(0.5) ? `${c.name} – ${rng.pick(words.features)}` : null,
      },
      updatedAt: new Date(times[r]),
    });
  }
  return out;
}

const slug = (text: string) => text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/ł/g, 'l').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

/** Content pages (from the shop's opening) and blog articles (one every week or two), published in (since, until]. */
export function articlesPublished(seed: number, shop: ShopDefinition, model: CatalogueModel, sinceMs: number | null, untilMs: number): GeneratedArticle[] {
  const words = WORDS[shop.language];
  const opened = Math.min(...model.catalogue.categories.map((c) => c.createdAt.getTime()));
  const since = sinceMs ?? -Infinity;
  const out: GeneratedArticle[] = [];
  words.pages.forEach(([title, text, path], i) => {
    const at = opened + i * HOUR_MS;
    if (at > since && at <= untilMs) {
      out.push({ id: `page-${i + 1}`, kind: 'page', title, text, url: `${shop.baseUrl}/${path}`, previewImageUrl: null, publishedAt: new Date(at), updatedAt: new Date(at) });
    }
  });
  const times = revisionTimes(seed, shop.code, 'blog', model.windowStartMs - 120 * DAY_MS, untilMs, 10);
  times.forEach((at, n) => {
    if (at <= since) return;
    const rng = createRandom(seed, 'content-article', shop.code, n);
    const base = words.articleTitles[n % words.articleTitles.length];
    const title = n < words.articleTitles.length ? base : `${base} (${Math.floor(n / words.articleTitles.length) + 1})`;
    const product = model.products[rng.int(0, model.products.length - 1)].product.name;
    out.push({
      id: `article-${n + 1}`, kind: 'article', title, text: words.articleText(title, product), url: `${shop.baseUrl}/blog/${slug(title)}`,
      previewImageUrl: rng.chance(0.8) ? `${shop.baseUrl}/images/blog/${n + 1}.jpg` : null, publishedAt: new Date(at), updatedAt: new Date(at),
    });
  });
  return out;
}

/** Every catalogue-area record of a read of (since, until], in the order the sync applies them. */
export function catalogueRecords(seed: number, shop: ShopDefinition, model: CatalogueModel, sinceMs: number | null, untilMs: number): CatalogueRecord[] {
  return [
    { kind: 'capabilities', capabilities: contentCapabilities(shop) },
    ...availabilityDictionary(shop).map((availability) => ({ kind: 'availability' as const, availability })),
    ...categoryTextsChanged(seed, shop, model, sinceMs, untilMs).map((category) => ({ kind: 'category' as const, category })),
    ...productTextsChanged(seed, shop, model, sinceMs, untilMs).map((product) => ({ kind: 'product' as const, product })),
    ...articlesPublished(seed, shop, model, sinceMs, untilMs).map((article) => ({ kind: 'article' as const, article })),
  ];
}
