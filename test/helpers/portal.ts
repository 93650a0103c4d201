/**
 * A partner's browser over plain HTTP for the partner-portal tests: keeps cookies per path as a browser would, reads
 * the form's CSRF token from the page, never follows redirects; plus the one-time links read from the e-mail outbox.
 */
import http from 'node:http';
import type { Db } from '../../src/db/knex.js';

export interface PortalResponse {
  status: number;
  location: string | null;
  html: string;
  /** Set-Cookie lines as sent. */
  setCookies: string[];
  contentType: string;
  /** Every response header as Node received it (lower-case names). */
  headers: http.IncomingHttpHeaders;
}

export class PortalBrowser {
  private readonly cookies = new Map<string, { value: string; path: string }>();
  /** The CSRF token of the last page that had a form. */
  csrf = '';

  /** `language` presets the portal's language cookie (as a visitor who chose it); `host` sends another Host header. */
  constructor(readonly baseUrl: string, options: { host?: string; language?: 'sk' | 'en' } = {}) {
    this.host = options.host;
    this.cookies.set('plang', { value: options.language ?? 'en', path: '/' });
  }

  readonly host: string | undefined;

  private cookieHeader(path: string): string {
    return [...this.cookies.entries()].filter(([, c]) => path.startsWith(c.path)).map(([k, c]) => `${k}=${c.value}`).join('; ');
  }

  private remember(lines: string[]): void {
    for (const line of lines) {
      const [pair, ...attrs] = line.split(';').map((s) => s.trim());
      const [name, ...value] = pair.split('=');
      const path = attrs.find((a) => a.toLowerCase().startsWith('path='))?.slice(5) ?? '/';
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value.join('=') === '') this.cookies.delete(name);
      else this.cookies.set(name, { value: value.join('='), path });
    }
  }

  async request(method: 'GET' | 'POST', path: string, form?: Record<string, string>, headers: Record<string, string> = {}): Promise<PortalResponse> {
    const h: Record<string, string> = { ...headers };
    if (this.host) h.Host = this.host;
    const cookie = this.cookieHeader(path.split('?')[0]);
    if (cookie) h.Cookie = cookie;
    let body: string | undefined;
    if (form) {
      h['Content-Type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams({ _csrf: this.csrf, ...form }).toString();
    }
    // node:http, not fetch: fetch never sends a Host header of its own choosing.
    const res = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const req = http.request(new URL(path, this.baseUrl), { method, headers: h }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c) => chunks.push(c));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString('latin1') }));
      });
      req.on('error', reject);
      req.end(body);
    });
    const setCookies = res.headers['set-cookie'] ?? [];
    this.remember(setCookies);
    const contentType = String(res.headers['content-type'] ?? '');
    const html = /pdf/.test(contentType) ? res.body : Buffer.from(res.body, 'latin1').toString('utf8');
    const token = /name="_csrf" value="([^"]+)"/.exec(html);
    if (token) this.csrf = token[1];
    return { status: res.status, location: (res.headers.location as string | undefined) ?? null, html, setCookies, contentType, headers: res.headers };
  }

  get(path: string, headers?: Record<string, string>): Promise<PortalResponse> {
    return this.request('GET', path, undefined, headers);
  }

  /** Loads `formPage` (for its CSRF token), then posts `form` to `action`. */
  async submit(formPage: string, action: string, form: Record<string, string>): Promise<PortalResponse> {
    await this.get(formPage);
    return this.request('POST', action, form);
  }
}

/** The path of the newest one-time link of `event` e-mailed to `email` (verification or password reset). */
export async function linkFromOutbox(db: Db, email: string, event: 'portal_email_verification' | 'portal_password_reset'): Promise<string> {
  const row = await db('email_outbox').where({ recipient: email.toLowerCase(), event }).orderBy('id', 'desc').first('body_html');
  if (!row) throw new Error(`no ${event} e-mail to ${email}`);
  const match = /href="([^"]+)"/.exec(row.body_html);
  if (!match) throw new Error('no link in the e-mail');
  return new URL(match[1].replace(/&amp;/g, '&')).pathname;
}
