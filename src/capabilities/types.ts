/** The shape of one capability: defined once, from which REST routes, MCP tools, /capabilities and /openapi.json are generated. */
import type { z } from 'zod';
import type { AppError } from '../errors.js';
import type { Scope } from '../auth/scopes.js';
import type { CapabilityContext } from './context.js';
import type { KeysetPosition } from './cursor.js';
import type { FieldScopes } from './projection.js';
import type { Period, PeriodRule } from './period.js';

/**
 * A rule the runner enforces that a JSON Schema of the parameters cannot say (it spans parameters or needs the
 * calendar): listed in the OpenAPI operation's description and its `x-rules-not-in-schema`, by error code.
 */
export interface ParamRule {
  code: string;
  rule: string;
}

export type CapabilityKind = 'list' | 'search' | 'get' | 'summary' | 'write';

/** MCP tool annotations; required on every capability so the contract test can check them. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export const readOnly: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/**
 * Annotations of a write tool that creates or changes a record of the service's own (a draft, a proposal) and is
 * idempotent through a client-supplied id; nothing outside the service changes (SPEC: a person approves that).
 */
export const idempotentWrite: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** What a list handler gets: the page size and where the previous page ended. */
export interface PageRequest {
  limit: number;
  after: KeysetPosition | null;
}

/** What a list handler returns; the runner turns `last` into a signed `nextCursor`. */
export interface PageResult<T> {
  items: T[];
  hasMore: boolean;
  last: KeysetPosition | null;
  /** Extra `meta` fields of the response, declared by the capability's `meta` schema (e.g. /availabilities' `manageable`). */
  meta?: Record<string, unknown>;
}

export interface HandlerInput<P> {
  params: P;
  ctx: CapabilityContext;
  /** Resolved period (null = all records), for capabilities with a period rule. */
  period: Period | null;
  /** Set for kind `list` (and for `search` mode: limit only). */
  page: PageRequest;
}

export interface Capability<P extends z.ZodObject = z.ZodObject, R extends z.ZodType = z.ZodType> {
  /** Stable name, `area.action`, e.g. `orders.list`. */
  name: string;
  /** One line: what it returns. */
  summary: string;
  /** Written for a developer and an assistant: what it returns, when to use it, period default, pagination. */
  description: string;
  /**
   * REST path under /api/v1, OpenAPI style: `/orders/{orderCode}`; null for an MCP-only tool (every `write`, and
   * MCP-only reads such as `automations_validate_draft`). REST stays GET-only, so a write never has a path.
   */
  path: string | null;
  scope: Scope;
  /** MCP tool name from SPEC.md's table, or null when the capability has no tool. */
  mcpTool: string | null;
  /**
   * `write` (see docs/decisions.md AU1): MCP only (no REST route, no OpenAPI operation), scope-checked like a read,
   * and absent from the tool list of a caller whose AI write mode is `read_only` (P41).
   */
  kind: CapabilityKind;
  /** `required`: the call is over one shop's data and takes `market`. */
  market: 'required' | 'none';
  period?: PeriodRule;
  /** For a listing that switches to search with this parameter (SPEC REST conventions 5). */
  searchParam?: 'query';
  /** Path and query parameters together; strict (an unknown parameter is a 400). */
  params: P;
  /** The result: for `list`/`search` one item, otherwise the whole `data` object. */
  result: R;
  /**
   * Extra `meta` fields (REST) that MCP puts beside `items`/`data`: a list handler returns them as `PageResult.meta`;
   * a summary handler returns them in its result and the runner moves them out of `data` (e.g. its own paging).
   */
  meta?: z.ZodObject;
  /** Fields removed unless the caller has the scope. Each must be optional in `result`. */
  fieldScopes?: FieldScopes;
  /**
   * Parameters a caller may plausibly try but that are never accepted (not in `params`, so not in the schema):
   * naming any of them is refused with this capability's own error instead of a bare UNKNOWN_PARAMETER.
   */
  refusedParams?: { names: readonly string[]; error: (named: string[]) => AppError };
  /** Parameter rules of this capability that its schema cannot express (they span parameters); listed in /openapi.json. */
  paramRules?: ParamRule[];
  annotations: ToolAnnotations;
  handler: (input: HandlerInput<z.output<P>>) => Promise<z.output<R> | PageResult<z.output<R>> | z.output<R>[]>;
}

/** Type-checks a definition against its own schemas; the registry stores it type-erased. */
export function defineCapability<P extends z.ZodObject, R extends z.ZodType>(definition: Capability<P, R>): Capability {
  return definition as unknown as Capability;
}

/** A capability served over REST (it has a path). */
export type RestCapability = Capability & { path: string };

/** True when the capability has a REST route (every capability but the MCP-only tools). */
export function isRestCapability(capability: Capability): capability is RestCapability {
  return capability.path !== null;
}
