/**
 * An MCP client with the official SDK's OAuth support, as an AI application would run it: a provider that keeps its
 * tokens in memory, registers by Client ID Metadata Document (an https `client_id`) or dynamically, and hands the
 * authorization URL to whoever plays the person (a browser in e2e, a form client in integration tests).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/client';

export const CLIENT_METADATA_URL = 'https://client.example.com/oauth/client-metadata.json';

export class TestOAuthProvider implements OAuthClientProvider {
  savedTokens: any;
  info: any;
  verifier = '';
  authorizationUrl: URL | null = null;

  constructor(readonly redirect: string, readonly viaMetadataDocument: boolean) {}

  get redirectUrl() {
    return this.redirect;
  }

  get clientMetadataUrl() {
    return this.viaMetadataDocument ? CLIENT_METADATA_URL : undefined;
  }

  get clientMetadata() {
    return {
      client_name: 'Test Assistant', redirect_uris: [this.redirect], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      token_endpoint_auth_method: 'none', application_type: 'native',
    } as any;
  }

  clientInformation() {
    return this.info;
  }

  saveClientInformation(info: any) {
    this.info = info;
  }

  tokens() {
    return this.savedTokens;
  }

  saveTokens(tokens: any) {
    this.savedTokens = tokens;
  }

  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }

  discovery: any;

  saveDiscoveryState(state: any) {
    this.discovery = state;
  }

  discoveryState() {
    return this.discovery;
  }
}

/** The client's own web host: serves its metadata document (what the authorization server fetches by `client_id`). */
export function metadataDocumentFetch(redirect: string): typeof fetch {
  return (async (input: string | URL | Request) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url !== CLIENT_METADATA_URL) return new Response('not found', { status: 404 });
    const document = {
      client_id: CLIENT_METADATA_URL, client_name: 'Test Assistant', client_uri: 'https://client.example.com/', redirect_uris: [redirect],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', application_type: 'native',
    };
    return new Response(JSON.stringify(document), { status: 200, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=60' } });
  }) as typeof fetch;
}

/** A loopback redirect receiver (RFC 8252) that records the callback's query. */
export async function startCallbackReceiver(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><title>Done</title><p>You can close this window.</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Connects with OAuth: the first attempt ends in UnauthorizedError with the authorization URL in `provider`. */
export async function connectWithOAuth(mcpUrl: URL, provider: TestOAuthProvider): Promise<{ client: Client | null; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  const client = new Client({ name: 'test-oauth', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  try {
    await client.connect(transport);
    return { client, transport };
  } catch (error) {
    if (error instanceof UnauthorizedError) return { client: null, transport };
    throw error;
  }
}

/** Finishes the flow with the callback URL the person's browser reached, and connects again. */
export async function finishOAuth(mcpUrl: URL, provider: TestOAuthProvider, transport: StreamableHTTPClientTransport, callback: URL): Promise<Client> {
  await transport.finishAuth(callback.searchParams);
  const client = new Client({ name: 'test-oauth', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  return client;
}
