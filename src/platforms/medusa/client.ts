/**
 * A small client for one Medusa v2 Admin API (docs/medusa.md "Admin API facts"): the secret API key as HTTP Basic auth,
 * JSON in and out, Medusa's `{ type, message }` errors as MedusaError, and list pages walked by `offset`.
 */

/** A reply other than 2xx, or no reply at all (`status` 0: the platform is unreachable). */
export class MedusaError extends Error {
  constructor(
    readonly status: number,
    readonly method: string,
    readonly path: string,
    readonly type: string | null,
    detail: string,
  ) {
    super(status === 0 ? `Medusa unreachable: ${method} ${path}: ${detail}` : `Medusa answered ${status} to ${method} ${path}: ${detail}`);
    this.name = 'MedusaError';
  }
}

export interface MedusaConnection {
  /** Base URL of the Medusa server, e.g. https://shop.example.com (no trailing slash needed). */
  url: string;
  /** A secret API key (`sk_…`). */
  apiKey: string;
}

type Method = 'GET' | 'POST' | 'DELETE';

/** Page size of list reads; Medusa takes any `limit`, 100 keeps one reply small. */
const PAGE = 100;
const TIMEOUT_MS = 30_000;

export class MedusaAdminClient {
  private readonly base: string;
  private readonly authorization: string;

  constructor(connection: MedusaConnection) {
    this.base = connection.url.replace(/\/+$/, '');
    // Medusa takes a secret key as Basic auth: the key as user name, no password (a Bearer secret key is refused).
    this.authorization = `Basic ${Buffer.from(`${connection.apiKey}:`).toString('base64')}`;
  }

  async request<T>(method: Method, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}`, {
        method,
        headers: { Authorization: this.authorization, Accept: 'application/json', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
      throw new MedusaError(0, method, path.split('?')[0], null, String(cause));
    }
    const text = await res.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON (a proxy's error page): the text goes into the error.
      parsed = null;
    }
    if (!res.ok) {
      // The path without its query: list filters carry no secrets, but messages stay short.
      throw new MedusaError(res.status, method, path.split('?')[0], parsed?.type ?? null, parsed?.message ?? text.slice(0, 200));
    }
    return parsed as T;
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  delete<T>(path: string): Promise<T> {
    return this.request<T>('DELETE', path);
  }

  /** Every record of a list endpoint (`key` names the array in the reply), page by page in a stable order. */
  async *list<T>(resource: string, key: string, query: Record<string, string | string[]>): AsyncGenerator<T[]> {
    for (let offset = 0; ; offset += PAGE) {
      const params = new URLSearchParams();
      // An array goes as `name[]=…` each: Medusa reads a single `name=…` as a string and refuses it where it wants an array.
      for (const [name, value] of Object.entries(query)) {
        if (Array.isArray(value)) for (const v of value) params.append(`${name}[]`, v);
        else params.append(name, value);
      }
      params.set('limit', String(PAGE));
      params.set('offset', String(offset));
      const page = await this.get<Record<string, unknown> & { count: number }>(`${resource}?${params.toString()}`);
      const rows = (page[key] ?? []) as T[];
      if (rows.length) yield rows;
      if (rows.length < PAGE || offset + PAGE >= page.count) return;
    }
  }

  async all<T>(resource: string, key: string, query: Record<string, string | string[]>): Promise<T[]> {
    const out: T[] = [];
    for await (const page of this.list<T>(resource, key, query)) out.push(...page);
    return out;
  }
}
