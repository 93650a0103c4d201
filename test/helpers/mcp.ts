/** Real MCP clients against the test server: SDK 2.x speaking 2026-07-28, SDK 1.x speaking a chosen 2025 revision, and raw HTTP. */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { TestServer } from './server.js';

export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export type LegacyVersion = (typeof LEGACY_VERSIONS)[number];
export const MODERN_VERSION = '2026-07-28';

export function mcpUrl(server: TestServer): URL {
  return new URL(`${server.baseUrl}/api/mcp`);
}

/** SDK 2.x client pinned to revision 2026-07-28 (server/discover probe, no initialize). */
export async function connectModern(server: TestServer, key: string): Promise<ModernClient> {
  const client = new ModernClient({ name: 'test-modern', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
  await client.connect(new ModernTransport(mcpUrl(server), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  return client;
}

/** What a person answers to an elicitation, and the questions a client was asked. */
export type ElicitAnswer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string | number | boolean | string[]> };
export interface AskedQuestion { message: string; requestedSchema: unknown; mode?: unknown }

/**
 * SDK 2.x client pinned to 2026-07-28 that declares form-mode elicitation and answers every question with `answer`
 * (the SDK fulfils `input_required` results through this handler and retries the call); `asked` records the questions.
 */
export async function connectModernAsking(server: TestServer, key: string, answer: () => ElicitAnswer): Promise<{ client: ModernClient; asked: AskedQuestion[] }> {
  const client = new ModernClient({ name: 'test-modern-asking', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN_VERSION } }, capabilities: { elicitation: { form: {} } } });
  const asked: AskedQuestion[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    const params = request.params as { message: string; requestedSchema?: unknown };
    asked.push({ message: params.message, requestedSchema: params.requestedSchema });
    return answer();
  });
  await client.connect(new ModernTransport(mcpUrl(server), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  return { client, asked };
}

/**
 * SDK 1.x client (2025-11-25 unless `version` says otherwise) that declares elicitation in `initialize` and answers
 * every `elicitation/create` with `answer` (its own `elicitInput` handler); `asked` records the questions. With
 * `answersTo`, its JSON-RPC responses (the answers) are POSTed to that server instead: another API process.
 */
export async function connectLegacyAsking(server: TestServer, key: string, answer: () => ElicitAnswer | Promise<ElicitAnswer>, options: { answersTo?: TestServer; version?: LegacyVersion } = {}): Promise<{ client: LegacyClient; asked: AskedQuestion[]; transport: LegacyTransport }> {
  const client = new LegacyClient({ name: 'test-legacy-asking', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  const asked: AskedQuestion[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const params = request.params as { message: string; requestedSchema?: unknown; mode?: unknown };
    asked.push({ message: params.message, requestedSchema: params.requestedSchema, mode: params.mode });
    return answer();
  });
  const transport = new VersionPinnedTransport(mcpUrl(server), key, options.version ?? '2025-11-25', options.answersTo && mcpUrl(options.answersTo));
  await client.connect(transport);
  return { client, asked, transport };
}

/**
 * SDK 1.x's Client always offers its newest revision (2025-11-25) in `initialize` (client/index.js `connect`); there is
 * no option. Older clients are simulated by rewriting the offered version on the wire; the server then negotiates it
 * and the 1.x transport sends it as MCP-Protocol-Version from then on.
 */
class VersionPinnedTransport extends LegacyTransport {
  constructor(url: URL, private readonly key: string, private readonly version: LegacyVersion, private readonly answersTo?: URL) {
    super(url, { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  }

  override async send(message: JSONRPCMessage | JSONRPCMessage[], options?: Parameters<LegacyTransport['send']>[1]): Promise<void> {
    if (!Array.isArray(message) && 'method' in message && message.method === 'initialize' && message.params) {
      message = { ...message, params: { ...message.params, protocolVersion: this.version } };
    }
    if (this.answersTo && !Array.isArray(message) && !('method' in message)) {
      // The answer goes to another API process, with the headers the SDK's transport would send.
      const response = await fetch(this.answersTo, {
        method: 'POST',
        headers: { Authorization: `Bearer ${this.key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'mcp-session-id': this.sessionId!, 'mcp-protocol-version': this.protocolVersion ?? this.version },
        body: JSON.stringify(message),
      });
      await response.arrayBuffer();
      if (response.status !== 202) throw new Error(`the other process answered ${response.status}`);
      return;
    }
    return super.send(message, options);
  }
}

export interface LegacyConnection {
  client: LegacyClient;
  transport: LegacyTransport;
}

/** SDK 1.x client (as users have it) speaking `version` through the initialize handshake. */
export async function connectLegacy(server: TestServer, key: string, version: LegacyVersion): Promise<LegacyConnection> {
  const client = new LegacyClient({ name: `test-legacy-${version}`, version: '1.0.0' });
  const transport = new VersionPinnedTransport(mcpUrl(server), key, version);
  await client.connect(transport);
  return { client, transport };
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** A POST to /api/mcp with exactly the given headers; parses JSON or the single SSE `message` event. */
export async function rawMcp(server: TestServer, body: unknown, headers: Record<string, string>, method = 'POST'): Promise<RawResponse> {
  const response = await fetch(mcpUrl(server), {
    method,
    headers: { Accept: 'application/json, text/event-stream', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown;
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const data = text.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).filter(Boolean);
    parsed = data.length > 0 ? JSON.parse(data[data.length - 1]) : undefined;
  } else if (text) {
    parsed = JSON.parse(text);
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}

/** The per-request `_meta` envelope of a 2026-07-28 request. */
export function envelope(version = MODERN_VERSION): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': version,
    'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
}

let nextId = 1;

/** A well-formed 2026-07-28 request: body with `_meta` envelope, and the matching headers. */
export function modernRequest(method: string, params: Record<string, unknown> = {}, key?: string): { body: Record<string, unknown>; headers: Record<string, string> } {
  const headers: Record<string, string> = { 'MCP-Protocol-Version': MODERN_VERSION, 'Mcp-Method': method };
  if (key) headers.Authorization = `Bearer ${key}`;
  if (method === 'tools/call' || method === 'prompts/get') headers['Mcp-Name'] = String(params.name);
  if (method === 'resources/read') headers['Mcp-Name'] = String(params.uri);
  return { body: { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: envelope() } }, headers };
}

/** The D3 error object a tool error result carries in its text. */
export function toolError(result: object): { error: { code: string; message: string; details?: Record<string, unknown> }; meta: { requestId: string } } {
  const { isError, content } = result as { isError?: boolean; content?: Array<{ type: string; text?: string }> };
  if (!isError || !content) throw new Error(`expected a tool error, got ${JSON.stringify(result).slice(0, 300)}`);
  return JSON.parse(content[0].text as string);
}
