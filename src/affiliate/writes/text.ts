/**
 * Texts that the affiliate writes store (portal pages, help articles, e-mail templates): HTML is sanitised with
 * sanitize-html to a small allow-list before it is stored, and every text is checked against the variables registry
 * so the answer can name the variables it does not know (they are stored as written, not refused: a person may add
 * them to the registry's wording later, and the portal leaves an unknown `{{…}}` as written).
 */
import sanitizeHtml from 'sanitize-html';
import { checkText, VARIABLES, type VariableSurface } from '../variables.js';

const HTML_OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: ['p', 'br', 'h2', 'h3', 'h4', 'strong', 'b', 'em', 'i', 'u', 's', 'ul', 'ol', 'li', 'a', 'blockquote', 'span', 'hr', 'table', 'thead', 'tbody', 'tr', 'th', 'td'],
  allowedAttributes: { a: ['href', 'title', 'target', 'rel'] },
  // `{{partner.link}}` as an href has no scheme, so it is kept; javascript:, data: and the like are dropped.
  allowedSchemes: ['http', 'https', 'mailto'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  // Never keep the content of these (a <script> body as text would be a surprise in a partner's e-mail).
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'iframe', 'object'],
};

/** Sanitised HTML and whether sanitising changed it. */
export function sanitiseHtml(html: string): { html: string; changed: boolean } {
  const clean = sanitizeHtml(html, HTML_OPTIONS);
  return { html: clean, changed: clean !== html };
}

/** Plain text (a subject, a title): every tag removed, entities kept as sanitize-html escapes them. */
export function plainText(text: string): { text: string; changed: boolean } {
  const clean = sanitizeHtml(text, { allowedTags: [], allowedAttributes: {}, disallowedTagsMode: 'discard' })
    .replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#x27;/g, '\'');
  return { text: clean.trim(), changed: clean.trim() !== text };
}

export interface VariableReport {
  /** Canonical names of the known variables the texts use. */
  variables: string[];
  /** `{{…}}` names the registry does not know (stored as written; the portal and e-mails leave them as written). */
  unknownVariables: string[];
  /** Known variables that this surface does not fill (e.g. `payout.amount` in a help article). */
  variablesNotOnSurface: string[];
}

/** The variables of some texts of one surface, checked against the registry. */
export function variableReport(surface: VariableSurface, ...texts: Array<string | null | undefined>): VariableReport {
  const check = checkText(texts.filter((t): t is string => typeof t === 'string').join('\n'));
  const variables = [...new Set(check.used.map((u) => u.canonical))];
  const notOnSurface = variables.filter((name) => !VARIABLES.find((v) => v.name === name)?.surfaces.includes(surface));
  return { variables, unknownVariables: check.unknown, variablesNotOnSurface: notOnSurface };
}
