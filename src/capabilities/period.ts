/** Period parsing and defaults (D5): inclusive calendar dates in the shop's time zone, at most 366 days. */
import { AppError } from '../errors.js';

export interface Period {
  from: string;
  to: string;
  timeZone: string;
}

/** How a capability treats `from`/`to`. */
export interface PeriodRule {
  /** What applies when neither bound is given. */
  default: 'all' | 'last30days' | 'currentMonth';
  /** Both bounds must be given (e.g. sales per product). */
  required?: boolean;
  /** The capability also takes `todayOnly` (orders). */
  todayOnly?: boolean;
}

export const MAX_PERIOD_DAYS = 366;

const DAY_MS = 86_400_000;

// Building an Intl formatter is costly (it showed in the REST profile); one per zone is kept.
const dateFormatters = new Map<string, Intl.DateTimeFormat>();

/** Today's calendar date in a time zone, as YYYY-MM-DD. */
export function todayIn(timeZone: string, now: Date): string {
  let formatter = dateFormatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    dateFormatters.set(timeZone, formatter);
  }
  return formatter.format(now);
}

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Inclusive number of days from `from` to `to`. */
export function daysInclusive(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS) + 1;
}

/** True for a real calendar date in YYYY-MM-DD form (rejects 2026-02-30). */
export function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const parsed = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === value;
}

export interface PeriodInput {
  from?: string;
  to?: string;
  todayOnly?: boolean;
}

/**
 * Resolves the period a request asks for, or null for "all records" (listings without a period).
 * Rejects reversed, over-long and contradictory periods with their own codes.
 */
export function resolvePeriod(input: PeriodInput, rule: PeriodRule, timeZone: string, now: Date): Period | null {
  const { from, to, todayOnly } = input;
  for (const [param, value] of [['from', from], ['to', to]] as const) {
    if (value !== undefined && !isCalendarDate(value)) {
      throw new AppError('INVALID_PARAMETER', `\`${param}\` must be a calendar date YYYY-MM-DD.`, { param, value });
    }
  }
  if (todayOnly && (from !== undefined || to !== undefined)) {
    throw new AppError('INVALID_PARAMETER_COMBINATION', '`todayOnly` cannot be combined with `from` or `to`.', { params: ['todayOnly', from !== undefined ? 'from' : 'to'] });
  }
  if (todayOnly) {
    const today = todayIn(timeZone, now);
    return { from: today, to: today, timeZone };
  }
  if (rule.required && (from === undefined || to === undefined)) {
    throw new AppError('PERIOD_REQUIRED', 'This call needs both `from` and `to` (YYYY-MM-DD).', { param: from === undefined ? 'from' : 'to' });
  }
  if (from === undefined && to !== undefined) {
    throw new AppError('MISSING_PARAMETER', '`to` needs `from`; give both bounds, or only `from` to mean "until today".', { param: 'from' });
  }
  if (from === undefined && rule.default === 'all') return null;
  const today = todayIn(timeZone, now);
  if (from === undefined) {
    if (rule.default === 'last30days') return { from: addDays(today, -29), to: today, timeZone };
    return { from: `${today.slice(0, 8)}01`, to: today, timeZone };
  }
  const end = to ?? today;
  if (from > end) {
    throw new AppError('PERIOD_REVERSED', `\`from\` (${from}) is after \`to\` (${end}).`, { from, to: end });
  }
  if (daysInclusive(from, end) > MAX_PERIOD_DAYS) {
    throw new AppError('PERIOD_TOO_LONG', `The period spans ${daysInclusive(from, end)} days; the longest is ${MAX_PERIOD_DAYS}. Walk longer history year by year.`, { from, to: end, maxDays: MAX_PERIOD_DAYS });
  }
  return { from, to: end, timeZone };
}
