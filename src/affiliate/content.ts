/**
 * The affiliate programme's built-in content: its languages, the default help articles (what `restoreDefault` puts
 * back), and how `{{variables}}` are filled in.
 */

/** The programme's languages: the home market's and English. */
export const CONTENT_LANGUAGES = ['sk', 'en'] as const;

export const ARTICLES: Array<{ key: string; isDefault: boolean; enabled: boolean; titles: Record<string, string>; html: Record<string, string>; custom?: string[] }> = [
  { key: 'getting-started', isDefault: true, enabled: true, titles: { sk: 'Ako začať', en: 'Getting started' },
    html: { sk: '<h2>Vitajte v programe {{programme.name}}</h2><p>Zdieľajte svoj odkaz {{partner.link}} alebo kód {{partner.discount_code}}.</p>', en: '<h2>Welcome to {{programme.name}}</h2><p>Share your link {{partner.link}} or your code {{partner.discount_code}}.</p>' } },
  { key: 'commission-rules', isDefault: true, enabled: true, titles: { sk: 'Pravidlá provízií', en: 'Commission rules' },
    html: { sk: '<p>Za každú objednávku získate {{programme.commission_percent}} % z hodnoty tovaru bez DPH. Klik platí {{programme.click_window_days}} dní.</p>', en: '<p>You earn {{programme.commission_percent}} % of the goods without VAT of every order. A click counts for {{programme.click_window_days}} days.</p>' } },
  { key: 'payouts', isDefault: true, enabled: true, titles: { sk: 'Výplaty', en: 'Payouts' }, custom: ['sk'],
    html: { sk: '<p>Vyplácame mesačne od sumy {{programme.payout_minimum}}; provízia čaká {{programme.return_period_days}} dní na uplynutie lehoty na vrátenie.</p>', en: '<p>We pay monthly from {{programme.payout_minimum}}; a commission waits {{programme.return_period_days}} days for the return period.</p>' } },
  { key: 'discount-codes', isDefault: true, enabled: false, titles: { sk: 'Zľavové kódy', en: 'Discount codes' },
    html: { sk: '<p>Váš kód {{partner.discount_code}} platí v obchode {{shop.name}}.</p>', en: '<p>Your code {{partner.discount_code}} works in {{shop.name}}.</p>' } },
  { key: 'brand-guidelines', isDefault: false, enabled: true, titles: { sk: 'Pravidlá propagácie značky', en: 'Brand guidelines' }, custom: ['sk', 'en'],
    html: { sk: '<p>Nepoužívajte značku {{shop.name}} v platenej reklame. Profil: {{partner.instagram}}</p>', en: '<p>Do not bid on {{shop.name}} in paid search. Profile: {{partner.instagram}}</p>' } },
];

/** The built-in wording of a default help article in one language (what `restoreDefault` puts back); null when the key has none. */
export function defaultArticleWording(key: string, language: string): { title: string; slug: string; html: string } | null {
  const article = ARTICLES.find((a) => a.key === key && a.isDefault);
  if (!article || article.titles[language] === undefined) return null;
  return { title: article.titles[language], slug: article.key, html: article.html[language] };
}

/** Fills `{{variables}}` from a snapshot; unknown ones stay as written. */
export function renderText(text: string, values: Record<string, string>): string {
  return text.replace(/\{\{\s*([^{}\s]+)\s*\}\}/g, (whole, name: string) => values[name] ?? whole);
}
