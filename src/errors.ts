/**
 * The one error module (D3): every error the service returns, over REST and MCP, is an AppError
 * with a code from this table. /openapi.json and docs/rest.md list the same table.
 */

export const errorCatalogue = {
  METHOD_NOT_ALLOWED: { status: 405, description: 'Only GET and HEAD are answered; checked before the credential.' },
  ROUTE_NOT_FOUND: { status: 404, description: 'No endpoint at this path.' },
  MISSING_CREDENTIALS: { status: 401, description: 'No `Authorization: Bearer <key>` header.' },
  INVALID_CREDENTIALS: { status: 401, description: 'The key is malformed or unknown.' },
  CREDENTIALS_REVOKED: { status: 401, description: 'The key was revoked.' },
  CREDENTIALS_EXPIRED: { status: 401, description: 'The key has expired.' },
  INTERFACE_NOT_ALLOWED: { status: 401, description: 'The key was not issued for this interface (REST or MCP).' },
  INSUFFICIENT_SCOPE: { status: 403, description: 'The key lacks the scope this call needs (`details.requiredScope`).' },
  SHOP_FORBIDDEN: { status: 403, description: 'The key may not see the shop named in `market`.' },
  SHOP_NOT_FOUND: { status: 404, description: 'The account has no shop with this `market` code.' },
  NOT_FOUND: { status: 404, description: 'No such record in this shop (a record of another shop is not found either).' },
  MISSING_PARAMETER: { status: 400, description: 'A required parameter is missing (`details.param`).' },
  INVALID_PARAMETER: { status: 400, description: 'A parameter has a bad value (`details.param`, `details.reason`).' },
  UNKNOWN_PARAMETER: { status: 400, description: 'A parameter this call does not take (`details.param`).' },
  INVALID_PARAMETER_COMBINATION: { status: 400, description: 'Parameters that cannot be combined, e.g. `query` with `cursor`, `from` or `to`, or `todayOnly` with `from`/`to` (`details.params`).' },
  LIMIT_OUT_OF_RANGE: { status: 400, description: '`limit` outside 1..250 for listings or 1..100 for searches; never silently clamped.' },
  PERIOD_REVERSED: { status: 400, description: '`from` is after `to`.' },
  PERIOD_TOO_LONG: { status: 400, description: 'The period spans more than 366 days; walk longer history year by year.' },
  PERIOD_REQUIRED: { status: 400, description: 'This call needs both `from` and `to`.' },
  INVALID_CURSOR: { status: 400, description: 'The cursor is malformed, tampered with or not from this service.' },
  CURSOR_MISMATCH: { status: 400, description: 'The cursor was issued for another shop, period or filter; send it back with all other parameters unchanged.' },
  PLAN_FEATURE_UNAVAILABLE: { status: 403, description: 'The account\'s plan does not include this feature (`details.feature`), e.g. outbound webhooks on trial and beginner.' },
  PLAN_LIMIT_REACHED: { status: 403, description: 'The plan\'s limit for this feature is reached (`details.limit`, `details.usage`); a lower plan keeps existing records but allows no new ones until under the limit.' },
  WEBHOOK_URL_REJECTED: { status: 400, description: 'A webhook URL must be https on the standard port and resolve to public addresses only (`details.reason`).' },
  STATE_CONFLICT: { status: 409, description: 'The record is not in a state that allows this action, e.g. retrying a delivery that is not FAILED (`details.state`).' },
  MALFORMED_REQUEST: { status: 400, description: 'The HTTP request itself could not be parsed; sent by the HTTP server before any route.' },
  REQUEST_TIMEOUT: { status: 408, description: 'The request was not received completely in time.' },
  REQUEST_HEADERS_TOO_LARGE: { status: 431, description: 'The request line and headers exceed 16 KB, e.g. a very long URL.' },
  INTERNAL_ERROR: { status: 500, description: 'An unexpected failure; quote `meta.requestId` to support.' },
  PDF_NOT_AVAILABLE: { status: 404, description: 'The document exists but the shop has no printable form of it (`pdfAvailable` is false in /documents).' },
  // Automations (issue 14) and the generic `write` kind.
  WRITE_MODE_READ_ONLY: { status: 403, description: 'A write tool was called with a credential whose AI write mode is `read_only` (such a credential does not even list write tools).' },
  VERSION_CONFLICT: { status: 409, description: '`expectedVersion` is not the record\'s current version (`details.currentVersion`); read it again and repeat the change.' },
  IDEMPOTENCY_CONFLICT: { status: 409, description: 'The `clientRequestId` was already used with a different request body; use a new id for a new request.' },
  CATALOG_CHANGED: { status: 409, description: 'The automation catalogue moved since the draft\'s `catalogVersion` (`details.currentCatalogVersion`); read automations_catalog and write the rule against it.' },
  INVALID_AUTOMATION: { status: 400, description: 'The automation rule does not validate against the catalogue; `details.problems` lists every problem with its node and reason.' },
  COUPON_NOT_FOUND: { status: 404, description: 'The coupon code is not in the service\'s records for this shop (never created there, or removed in the shop).' },
  // Coupon writes over MCP (issue 13, D25).
  CONFIRMATION_TOKEN_INVALID: { status: 400, description: 'The `confirmationToken` is malformed, tampered with or not from this service; call without it for a new preview and token.' },
  CONFIRMATION_TOKEN_EXPIRED: { status: 400, description: 'The `confirmationToken` expired (10 minutes after the preview); call without it for a new preview.' },
  CONFIRMATION_TOKEN_MISMATCH: { status: 400, description: 'The `confirmationToken` was issued for another tool or other arguments; confirm with exactly the arguments of the preview.' },
  CONFIRMATION_TOKEN_OTHER_CREDENTIAL: { status: 403, description: 'The `confirmationToken` was issued to another key or connection; only the one that asked for the preview can confirm.' },
  CONFIRMATION_TOKEN_USED: { status: 409, description: 'The `confirmationToken` was already used; a token confirms one change once.' },
  CONFIRMATION_STALE: { status: 409, description: 'The coupon changed in the shop since the preview; nothing was changed. Call without `confirmationToken` for a new preview.' },
  CONFIRMATION_NOT_ANSWERED: { status: 408, description: 'MCP only: the person did not answer the confirmation question their client showed in time (or the question was withdrawn); nothing was changed. Call again to ask again.' },
  COUPON_HAS_DEPENDENCIES: { status: 409, description: 'The coupon has a live dependency (`details.dependencies`: an approved partner\'s discount code, an enabled automation using the code) and is not removed.' },
  COUPON_CODE_TAKEN: { status: 409, description: 'The discount code already belongs to, or is reserved by an approved code request for, another affiliate partner in this shop (`details.partnerId`).' },
  PLATFORM_UNAVAILABLE: { status: 503, description: 'The shop\'s platform cannot be written from here: no adapter for it, the shop is not connected, or the platform does not support this change (`details.reason`).' },
  PLATFORM_UNSUPPORTED: { status: 422, description: 'The shop\'s platform does not take this kind of write (`details.platform`, `details.write`: coupons, product_texts, category_texts or availability); its adapter declares what it can do. Nothing was changed.' },
  PLATFORM_CONNECTION_REFUSED: { status: 422, description: 'Connecting a shop: the platform\'s test connection failed (`details.reason`: credentials_rejected, unreachable or invalid); nothing was saved.' },
  // Affiliate writes (issue 13).
  FINANCIAL_SETTING_READ_ONLY: { status: 403, description: 'A financial affiliate setting (commissions, commission base, clicks, payouts, referrals) is never changed over MCP (`details.params`); a person changes it in the application. Nothing was changed.' },
  ALREADY_EXISTS: { status: 409, description: 'A record with this key exists already (`details.param`); change it with the matching update tool.' },
  // The partner portal (issue 24).
  REGISTRATION_CLOSED: { status: 403, description: 'The partner portal does not take registrations now; `details.reason` is the reason the programme gives.' },
  LINK_EXPIRED: { status: 410, description: 'An e-mailed link (address verification, password reset) has expired or was used; ask for a new one.' },
  DOCUMENT_FILE_INVALID: { status: 400, description: 'An uploaded document wording file cannot be used (`details.reason`: format, not_pdf, empty, too_large, unreadable, no_text or too_long); no version was made.' },
  CODE_ALREADY_RESERVED: { status: 409, description: 'The requested discount code is already held in this shop by another partner or coupon (`details.heldBy`); reject the request with a reason instead.' },
  // Proposals (issue 13).
  PROPOSAL_TARGET_NOT_FOUND: { status: 404, description: 'A proposal names a product, category or availability entry the shop does not have (`details.entity`, `details.id`).' },
  FIELD_NOT_WRITABLE: { status: 400, description: 'The shop\'s platform does not let the service write this field (`details.field`; see products_content_policy `writableFields`).' },
  TEXT_TOO_LONG: { status: 400, description: 'A proposed text is longer than the platform\'s limit for the field (`details.field`, `details.maxLength`, `details.length`).' },
  STALE_FINGERPRINT: { status: 409, description: 'The text changed since you read it: `fingerprint` is not the current one (`details.currentFingerprint`); read it again and propose against the current text.' },
  PROPOSAL_EMPTY: { status: 400, description: 'The proposal changes nothing: every proposed value equals the current one.' },
  DICTIONARY_NOT_MANAGEABLE: { status: 409, description: 'The shop\'s availability dictionary cannot be changed through the service (`details.reason`: PLATFORMA, BEZ_ROZSIRENIA or PROSTREDIE).' },
  PROPOSAL_ALREADY_DECIDED: { status: 409, description: 'The proposal was already decided or has expired (`details.status`); a decision is taken once.' },
  // Proposals as MCP tasks (issue 26.2): why a task failed, as its tasks/result says.
  PROPOSAL_REJECTED: { status: 409, description: 'MCP task: a person rejected the proposal (`details.by`, `details.reason`); nothing was written.' },
  PROPOSAL_EXPIRED: { status: 409, description: 'MCP task: nobody decided the proposal within 7 days (`details.expiresAt`); nothing was written.' },
  PROPOSAL_WITHDRAWN: { status: 409, description: 'MCP task: the assistant withdrew the proposal (tasks/cancel) before anybody decided; nothing was written.' },
  PROPOSAL_WRITE_FAILED: { status: 502, description: 'MCP task: the proposal was approved but no item could be written (per item in `details.items`).' },
  TASK_STILL_WORKING: { status: 409, description: 'MCP tasks/result: the proposal is still waiting or writing after the wait this request allows; poll tasks/get (`details.pollInterval`).' },
  WRITES_UNAVAILABLE: { status: 503, description: 'This service instance has no write path (no Temporal client or shop platform adapter): nothing was stored.' },
  // Text screens of the application (issue 25, UT).
  IMPORT_FILE_INVALID: { status: 400, description: 'A text import file cannot be used (`details.reason`: format, empty, too_large, no_code_column, unknown_column, duplicate_code, too_many_rows or unreadable; `details.row` / `details.column` where known); nothing was read from it.' },
  IMPORT_ALREADY_CONFIRMED: { status: 409, description: 'This import preview was already confirmed (its texts were written once); upload the file again for a new preview.' },
  METRICS_UNAVAILABLE: { status: 503, description: '`/metrics` could not read the service-wide figures (Postgres did not answer); the next scrape tries again.' },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCode = keyof typeof errorCatalogue;
export const errorCodes = Object.keys(errorCatalogue) as ErrorCode[];

export type ErrorDetails = Record<string, unknown>;

/** A business or request error with a stable code; the edges render it (REST body, MCP isError result). */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails, headers?: Record<string, string>) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  get status(): number {
    return errorCatalogue[this.code].status;
  }

  /** The `error` object of D3. */
  toJSON(): { code: ErrorCode; message: string; details?: ErrorDetails } {
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }
}

/** Anything thrown becomes an AppError; unknown failures become INTERNAL_ERROR without leaking internals. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  return new AppError('INTERNAL_ERROR', 'An unexpected error occurred. Quote the requestId to support.');
}

/** The table of error codes in docs/rest.md, generated from the catalogue above. */
export function errorCodesMarkdown(): string {
  const rows = errorCodes.map((code) => `| \`${code}\` | ${errorCatalogue[code].status} | ${errorCatalogue[code].description} |`);
  return ['| Code | HTTP | Meaning |', '|---|---|---|', ...rows].join('\n');
}
