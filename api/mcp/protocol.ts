/**
 * Transport rules of the MCP endpoint that we check ourselves, before the SDK sees a request:
 * protocol revisions, the 2026-07-28 request headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`)
 * against the body, and the JSON-RPC error bodies those checks answer with.
 */

/** Newest first. 2026-07-28 is served statelessly; the 2025 revisions through the `initialize` handshake, without sessions. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'] as const;
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
/** The revisions `server/discover` lists (the SDK lists only modern ones there; 2025 revisions are negotiated by `initialize`). */
export const MODERN_PROTOCOL_VERSIONS = SUPPORTED_PROTOCOL_VERSIONS.filter((version) => version >= MODERN_PROTOCOL_VERSION);
/** What a 2025-era request without `MCP-Protocol-Version` is taken to be (2025-06-18 transport rules). */
export const HEADERLESS_PROTOCOL_VERSION = '2025-03-26';

/** JSON-RPC error codes of the 2026-07-28 specification used here. */
export const JSONRPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  INVALID_PARAMS: -32602,
  /** `HeaderMismatch`: a required header is missing, malformed or disagrees with the body (HTTP 400). */
  HEADER_MISMATCH: -32020,
  /** `UnsupportedProtocolVersionError`, with `data.supported` and `data.requested` (HTTP 400). */
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
  /** A 2025-era session id that is not (or no longer) live (HTTP 404), as the SDKs answer it. */
  SESSION_NOT_FOUND: -32001,
  /** Implementation-defined server error, used for transport refusals (405, 403, 415). */
  SERVER_ERROR: -32000,
} as const;

const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';

/** Methods whose `Mcp-Name` header mirrors a body field (SEP-2243 "Required For"). */
const NAME_SOURCE: Record<string, 'name' | 'uri'> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

export interface JsonRpcErrorBody {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string; data?: unknown };
}

/** A refusal of the transport layer: HTTP status plus a JSON-RPC error body. */
export interface TransportRejection {
  status: number;
  body: JsonRpcErrorBody;
}

export function jsonRpcError(code: number, message: string, data?: unknown, id: string | number | null = null): JsonRpcErrorBody {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

export interface McpHeaders {
  protocolVersion?: string;
  method?: string;
  name?: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The JSON-RPC id to echo in an error: the body's id when it is a request, else null. */
export function requestIdOf(body: unknown): string | number | null {
  if (!isObject(body) || typeof body.method !== 'string') return null;
  return typeof body.id === 'string' || typeof body.id === 'number' ? body.id : null;
}

/** Header values may carry optional whitespace around them (RFC 9110); values themselves are case-sensitive. */
function trimOws(value: string | undefined): string | undefined {
  return value === undefined ? undefined : value.replace(/^[ \t]+|[ \t]+$/g, '');
}

const BASE64_SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;

/** Decodes the `=?base64?…?=` form of `Mcp-Name` (SEP-2243 "Value Encoding"); undefined when the sentinel is malformed. */
export function decodeHeaderValue(value: string): string | undefined {
  if (!value.startsWith('=?base64?')) return value;
  const match = BASE64_SENTINEL.exec(value);
  if (!match || match[1].length % 4 !== 0) return undefined;
  const decoded = Buffer.from(match[1], 'base64');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(decoded);
  } catch {
    return undefined;
  }
}

function mismatch(id: string | number | null, message: string, header: string, value: string | undefined, body: unknown): TransportRejection {
  return { status: 400, body: jsonRpcError(JSONRPC.HEADER_MISMATCH, `Header mismatch: ${message}`, { header, value: value ?? null, body: body ?? null }, id) };
}

/**
 * -32022 naming the revisions the client can switch to on the path it took (T1): a request in the 2026-07-28 envelope
 * gets what `server/discover` lists; a 2025-era request (no envelope) gets every revision we serve, since it may
 * `initialize` with a 2025 one or move to the envelope.
 */
export function unsupportedVersion(requested: string, id: string | number | null = null, era: Era['kind'] = 'legacy'): TransportRejection {
  const supported = era === 'modern' ? MODERN_PROTOCOL_VERSIONS : SUPPORTED_PROTOCOL_VERSIONS;
  return {
    status: 400,
    body: jsonRpcError(JSONRPC.UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version ${requested}; this server supports ${supported.join(', ')}.`, { supported: [...supported], requested }, id),
  };
}

/** The revision a request speaks, as far as the transport rules are concerned. */
export type Era = { kind: 'modern'; version: string } | { kind: 'legacy'; version: string };

/**
 * Checks one POSTed JSON body against the request headers. Returns the era it belongs to, or the 400 to answer.
 *
 * - A body carrying `_meta["io.modelcontextprotocol/protocolVersion"]` is a 2026-07-28 message: `MCP-Protocol-Version`
 *   must be present and equal to it; a request must carry `Mcp-Method` equal to `method`, and `tools/call`,
 *   `resources/read`, `prompts/get` must carry `Mcp-Name` equal to `params.name`/`params.uri` (Base64 sentinel decoded).
 *   Missing or disagreeing → -32020 HeaderMismatch; a revision we do not serve → -32022 naming the supported ones.
 * - A body without it is 2025-era traffic (the `initialize` handshake or a request after it). The rules of those
 *   revisions apply: `MCP-Protocol-Version`, when sent, must name a supported revision (-32022 otherwise); when absent
 *   the request is taken as 2025-03-26, as 2025-06-18 prescribes for a server without session state.
 *   `Mcp-Method`/`Mcp-Name` are not required there, but when a client sends them they must still agree with the body,
 *   because intermediaries may route on them.
 */
export function checkRequestHeaders(headers: McpHeaders, body: unknown): { era: Era } | { rejection: TransportRejection } {
  const id = requestIdOf(body);
  const headerVersion = trimOws(headers.protocolVersion);
  const headerMethod = trimOws(headers.method);
  const headerName = trimOws(headers.name);

  if (Array.isArray(body)) {
    // JSON-RPC batches exist only in 2025-03-26; the SDK validates their elements.
    if (headerVersion !== undefined && !(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(headerVersion)) return { rejection: unsupportedVersion(headerVersion) };
    return { era: { kind: 'legacy', version: headerVersion ?? HEADERLESS_PROTOCOL_VERSION } };
  }
  if (!isObject(body) || body.jsonrpc !== '2.0') {
    return { rejection: { status: 400, body: jsonRpcError(JSONRPC.INVALID_REQUEST, 'Invalid Request: the body is not a JSON-RPC 2.0 message.') } };
  }
  const method = typeof body.method === 'string' ? body.method : undefined;
  const isRequest = method !== undefined && 'id' in body;
  const params = isObject(body.params) ? body.params : undefined;
  const meta = params && isObject(params._meta) ? params._meta : undefined;
  const claimed = meta?.[PROTOCOL_VERSION_META];

  const checkMethodAndName = (required: boolean): TransportRejection | undefined => {
    if (method === undefined) return undefined; // a posted response: no method to mirror
    if (headerMethod === undefined) {
      return required && isRequest ? mismatch(id, `the required Mcp-Method header is missing (body method is "${method}").`, 'Mcp-Method', undefined, method) : undefined;
    }
    if (headerMethod !== method) return mismatch(id, `Mcp-Method header "${headerMethod}" does not match body method "${method}".`, 'Mcp-Method', headerMethod, method);
    const field = NAME_SOURCE[method];
    if (!field || !isRequest) return undefined;
    const bodyName = typeof params?.[field] === 'string' ? (params[field] as string) : undefined;
    if (headerName === undefined) {
      return required && bodyName !== undefined ? mismatch(id, `the required Mcp-Name header is missing (body params.${field} is "${bodyName}").`, 'Mcp-Name', undefined, bodyName) : undefined;
    }
    const decoded = decodeHeaderValue(headerName);
    if (decoded === undefined) return mismatch(id, 'the Mcp-Name header carries a malformed =?base64?…?= value.', 'Mcp-Name', headerName, bodyName);
    if (decoded !== bodyName) return mismatch(id, `Mcp-Name header "${decoded}" does not match body params.${field} "${bodyName ?? ''}".`, 'Mcp-Name', headerName, bodyName);
    return undefined;
  };

  if (claimed !== undefined) {
    if (typeof claimed !== 'string') {
      return { rejection: { status: 400, body: jsonRpcError(JSONRPC.INVALID_PARAMS, `Invalid params: _meta["${PROTOCOL_VERSION_META}"] must be a string.`, undefined, id) } };
    }
    if (headerVersion === undefined) return { rejection: mismatch(id, `the required MCP-Protocol-Version header is missing (body names ${claimed}).`, 'MCP-Protocol-Version', undefined, claimed) };
    if (headerVersion !== claimed) return { rejection: mismatch(id, `MCP-Protocol-Version header "${headerVersion}" does not match body _meta protocol version "${claimed}".`, 'MCP-Protocol-Version', headerVersion, claimed) };
    if (!(MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(claimed)) return { rejection: unsupportedVersion(claimed, id, 'modern') };
    const rejection = checkMethodAndName(true);
    return rejection ? { rejection } : { era: { kind: 'modern', version: claimed } };
  }

  if (headerVersion !== undefined) {
    if (!(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(headerVersion)) return { rejection: unsupportedVersion(headerVersion, id) };
    if (headerVersion === MODERN_PROTOCOL_VERSION) {
      // A 2026-07-28 message carries its revision in the body too; without it the request is malformed.
      return {
        rejection: { status: 400, body: jsonRpcError(JSONRPC.INVALID_PARAMS, `Invalid params: MCP-Protocol-Version is ${headerVersion}, but params._meta["${PROTOCOL_VERSION_META}"] is missing.`, { missing: [PROTOCOL_VERSION_META] }, id) },
      };
    }
  }
  const rejection = checkMethodAndName(false);
  return rejection ? { rejection } : { era: { kind: 'legacy', version: headerVersion ?? HEADERLESS_PROTOCOL_VERSION } };
}
