/**
 * Paging for every list page: `?page=N` (1-based) with a fixed page size per list. A page asks its query for one row
 * more than it shows, so it knows whether a next page exists without counting. Bad values are refused with a code.
 */
import type { Request } from 'express';
import { AppError } from '../../src/errors.js';

/** The highest page number a link may carry; deeper pages are reached by narrowing the filters. */
export const MAX_PAGE = 10_000;

export interface PageWindow {
  page: number;
  size: number;
  offset: number;
  /** What to ask the query for: one more than the page shows. */
  fetch: number;
}

export function pageWindow(req: Request, size: number): PageWindow {
  const raw = req.query.page;
  let page = 1;
  if (raw !== undefined) {
    if (typeof raw !== 'string' || !/^[1-9][0-9]{0,4}$/.test(raw) || Number(raw) > MAX_PAGE) {
      throw new AppError('INVALID_PARAMETER', `page must be a whole number from 1 to ${MAX_PAGE}.`, { param: 'page' });
    }
    page = Number(raw);
  }
  return { page, size, offset: (page - 1) * size, fetch: size + 1 };
}

export interface Pager {
  page: number;
  previousHref: string | null;
  nextHref: string | null;
}

/** Cuts the extra row and builds the links, keeping the request's other query parameters. */
export function paged<T>(req: Request, window: PageWindow, rows: T[]): { items: T[]; pager: Pager } {
  const href = (page: number) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query)) if (k !== 'page' && typeof v === 'string' && v !== '') params.set(k, v);
    if (page > 1) params.set('page', String(page));
    const query = params.toString();
    return `${req.baseUrl}${req.path}${query ? `?${query}` : ''}`;
  };
  return {
    items: rows.slice(0, window.size),
    pager: {
      page: window.page,
      previousHref: window.page > 1 ? href(window.page - 1) : null,
      nextHref: rows.length > window.size ? href(window.page + 1) : null,
    },
  };
}
