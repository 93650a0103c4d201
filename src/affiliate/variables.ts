/**
 * The registry of variables that partner-portal texts, help articles, e-mails and legal documents may contain, written
 * `{{name}}`. Stored texts keep them unsubstituted; the portal and the e-mails fill them in when they render.
 */
export const VARIABLE_SURFACES = ['articles', 'emails', 'documents', 'portal'] as const;
export type VariableSurface = (typeof VARIABLE_SURFACES)[number];

export interface VariableDefinition {
  name: string;
  aliases: string[];
  type: 'string' | 'money' | 'percent' | 'url' | 'date' | 'integer';
  surfaces: VariableSurface[];
  example: string;
  description: string;
}

const ALL: VariableSurface[] = ['articles', 'emails', 'documents', 'portal'];

export const VARIABLES: readonly VariableDefinition[] = [
  { name: 'partner.handle', aliases: ['partner_handle'], type: 'string', surfaces: ALL, example: 'KATKA', description: 'The partner\'s handle.' },
  { name: 'partner.name', aliases: ['partner_name', 'name'], type: 'string', surfaces: ['emails', 'documents'], example: 'Katarína Horváthová', description: 'The partner\'s contact name.' },
  { name: 'partner.web', aliases: [], type: 'url', surfaces: ['emails', 'documents'], example: 'https://katka.example', description: 'The partner\'s web site.' },
  { name: 'partner.discount_code', aliases: ['coupon_code'], type: 'string', surfaces: ['articles', 'emails', 'portal'], example: 'KATKA10', description: 'The partner\'s discount code in the shop.' },
  { name: 'partner.link', aliases: ['affiliate_link'], type: 'url', surfaces: ['articles', 'emails', 'portal'], example: 'https://partners.shop.example/r/katka?c=1&to=…', description: 'The partner\'s tracked link to the shop home.' },
  { name: 'programme.name', aliases: ['program_name'], type: 'string', surfaces: ALL, example: 'Partner programme', description: 'Name of the programme.' },
  { name: 'programme.commission_percent', aliases: ['commission'], type: 'percent', surfaces: ALL, example: '8', description: 'Default commission in percent.' },
  { name: 'programme.click_window_days', aliases: ['cookie_days'], type: 'integer', surfaces: ALL, example: '30', description: 'Click attribution window in days.' },
  { name: 'programme.payout_minimum', aliases: ['payout_min'], type: 'money', surfaces: ALL, example: '50.00 EUR', description: 'Smallest payout.' },
  { name: 'programme.return_period_days', aliases: [], type: 'integer', surfaces: ALL, example: '14', description: 'Days a commission stays pending after the order.' },
  { name: 'shop.name', aliases: ['shop_name', 'eshop'], type: 'string', surfaces: ALL, example: 'Demo Shop SK', description: 'The shop\'s name.' },
  { name: 'shop.url', aliases: ['shop_url'], type: 'url', surfaces: ALL, example: 'https://www.demoshop.sk', description: 'The shop\'s address.' },
  { name: 'portal.url', aliases: ['portal_url'], type: 'url', surfaces: ALL, example: 'https://partners.demoshop.sk', description: 'The partner portal\'s address.' },
  { name: 'payout.amount', aliases: [], type: 'money', surfaces: ['emails'], example: '81.14 EUR', description: 'Amount of a payout.' },
  { name: 'conversion.commission', aliases: [], type: 'money', surfaces: ['emails'], example: '5.52 EUR', description: 'Commission of one conversion.' },
  { name: 'date', aliases: ['today'], type: 'date', surfaces: ['emails', 'documents'], example: '2026-11-20', description: 'The date of rendering or signing.' },
];

const byName = new Map<string, VariableDefinition>();
for (const v of VARIABLES) for (const n of [v.name, ...v.aliases]) byName.set(n, v);

/** The variables a text uses, each with its canonical name, and those the registry does not know. */
export function checkText(text: string): { used: Array<{ written: string; canonical: string }>; unknown: string[] } {
  const used: Array<{ written: string; canonical: string }> = [];
  const unknown: string[] = [];
  for (const match of text.matchAll(/\{\{\s*([^{}\s]+)\s*\}\}/g)) {
    const written = match[1];
    const known = byName.get(written);
    if (known) {
      if (!used.some((u) => u.written === written)) used.push({ written, canonical: known.name });
    } else if (!unknown.includes(written)) unknown.push(written);
  }
  return { used, unknown };
}
