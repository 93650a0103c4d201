/**
 * Endpoint address rules (SPEC "Endpoint rules", D17): https on the standard port, public addresses only, checked at
 * save and again at every delivery on the addresses the name resolves to then. The delivery connects only to the
 * addresses verified here (see http.ts), so nothing resolves the name a second time between check and connect.
 */
import dns from 'node:dns';
import ipaddr from 'ipaddr.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses; injected so tests control DNS answers. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The system resolver (getaddrinfo, as every other program on the host sees the name). */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export interface AddressPolicy {
  /** D17: loopback over plain http on any port; never in production. */
  allowLoopback: boolean;
}

/**
 * Why an address or URL is refused. `dns_error` (a temporary resolver failure) is the only reason a delivery retries;
 * every other reason is a persistent error (FAILED, no retry).
 */
export type AddressRejection =
  | 'invalid_url' | 'not_https' | 'port_not_standard' | 'credentials_in_url' | 'fragment_in_url'
  | 'loopback_name' | 'non_public_address' | 'unresolvable' | 'dns_error';

export class WebhookAddressError extends Error {
  constructor(readonly reason: AddressRejection, message: string) {
    super(message);
    this.name = 'WebhookAddressError';
  }

  get retryable(): boolean {
    return this.reason === 'dns_error';
  }
}

export type AddressKind = 'public' | 'loopback' | 'non_public';

/** Public unicast space that is still not a place to send webhooks to: cloud-provider service addresses. */
const extraBlockedV4 = [
  '168.63.129.16/32', // Azure wire server / metadata
].map((cidr) => ipaddr.IPv4.parseCIDR(cidr));

const extraBlockedV6 = [
  '::/96', // IPv4-compatible (deprecated), never a real destination
  '64:ff9b:1::/48', // NAT64 local use (RFC 8215)
].map((cidr) => ipaddr.IPv6.parseCIDR(cidr));

const nat64WellKnown = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 {
  const bytes = v6.toByteArray();
  return new ipaddr.IPv4(bytes.slice(12, 16));
}

/**
 * Classifies one address: `public` (global unicast), `loopback` (127.0.0.0/8 and ::1 only) or `non_public` (everything
 * else: private, shared (CGNAT), link-local and cloud metadata, multicast, reserved, documentation, unique-local, …).
 * IPv4-mapped and NAT64 (64:ff9b::/96) addresses are judged as the IPv4 address they carry, and are never loopback;
 * 6to4, Teredo and the other transition forms are refused.
 */
export function classifyAddress(text: string): { kind: AddressKind; range: string } {
  const bare = text.replace(/^\[|\]$/g, '');
  if (!isIpLiteral(bare)) return { kind: 'non_public', range: 'invalid' };
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv4') {
    const v4 = parsed as ipaddr.IPv4;
    const range = v4.range();
    if (range === 'loopback') return { kind: 'loopback', range };
    if (range !== 'unicast') return { kind: 'non_public', range };
    if (extraBlockedV4.some((cidr) => v4.match(cidr))) return { kind: 'non_public', range: 'cloudService' };
    return { kind: 'public', range };
  }
  const v6 = parsed as ipaddr.IPv6;
  const range = v6.range();
  if (range === 'loopback') return { kind: 'loopback', range };
  if (range === 'ipv4Mapped' || (range === 'rfc6052' && v6.match(nat64WellKnown))) {
    const inner = classifyAddress(embeddedIPv4(v6).toString());
    return inner.kind === 'public' ? { kind: 'public', range } : { kind: 'non_public', range: `${range}:${inner.range}` };
  }
  if (range !== 'unicast') return { kind: 'non_public', range };
  if (extraBlockedV6.some((cidr) => v6.match(cidr))) return { kind: 'non_public', range: 'reserved' };
  return { kind: 'public', range };
}

/** An IP literal as URLs and resolvers write them: dotted-quad IPv4 or IPv6 (URL hosts are normalised to these). */
function isIpLiteral(text: string): boolean {
  return ipaddr.IPv4.isValidFourPartDecimal(text) || ipaddr.IPv6.isValid(text);
}

export interface CheckedUrl {
  url: URL;
  /** Host name without IPv6 brackets. */
  hostname: string;
  /** The URL uses http or a non-standard port: only allowed when every address is loopback and D17 allows it. */
  needsLoopback: boolean;
}

/** The syntactic rules of a webhook URL; throws WebhookAddressError. */
export function checkUrlSyntax(text: string, policy: AddressPolicy): CheckedUrl {
  if (typeof text !== 'string' || text.length > 2048 || !URL.canParse(text)) {
    throw new WebhookAddressError('invalid_url', 'The URL is not a valid absolute URL (at most 2048 characters).');
  }
  const url = new URL(text);
  if (url.username || url.password) throw new WebhookAddressError('credentials_in_url', 'The URL may not carry a user name or password.');
  if (url.hash) throw new WebhookAddressError('fragment_in_url', 'The URL may not carry a #fragment.');
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const needsLoopback = url.protocol !== 'https:' || url.port !== '';
  if (url.protocol !== 'https:' && !(policy.allowLoopback && url.protocol === 'http:')) {
    throw new WebhookAddressError('not_https', 'The URL must use https://.');
  }
  if (needsLoopback && !policy.allowLoopback) {
    throw new WebhookAddressError('port_not_standard', 'The URL must use the standard https port (443).');
  }
  if (!policy.allowLoopback && (hostname === 'localhost' || hostname.endsWith('.localhost'))) {
    throw new WebhookAddressError('loopback_name', 'localhost is not a public address.');
  }
  return { url, hostname, needsLoopback };
}

/**
 * Resolves the URL's host (an IP literal is taken as it is) and checks every address it resolves to: all must be
 * public, or — with D17's allowance — all loopback. One non-public answer refuses the whole name, so a DNS answer
 * that mixes a public and a private address cannot steer a delivery inside. Returns the verified addresses.
 */
export async function verifyDestination(text: string, policy: AddressPolicy, resolve: Resolver): Promise<{ url: URL; hostname: string; addresses: ResolvedAddress[] }> {
  const checked = checkUrlSyntax(text, policy);
  const { hostname } = checked;
  let addresses: ResolvedAddress[];
  if (isIpLiteral(hostname)) {
    addresses = [{ address: hostname, family: ipaddr.IPv6.isValid(hostname) ? 6 : 4 }];
  } else {
    try {
      addresses = await resolve(hostname);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'ENOTFOUND' || code === 'ENODATA' || code === 'EAI_NONAME') {
        throw new WebhookAddressError('unresolvable', `The name ${hostname} does not resolve.`);
      }
      throw new WebhookAddressError('dns_error', `Resolving ${hostname} failed (${code ?? 'error'}).`);
    }
    if (addresses.length === 0) throw new WebhookAddressError('unresolvable', `The name ${hostname} does not resolve.`);
  }
  const kinds = addresses.map((a) => classifyAddress(a.address).kind);
  if (policy.allowLoopback && kinds.every((k) => k === 'loopback')) return { url: checked.url, hostname, addresses };
  const bad = addresses.filter((_a, i) => kinds[i] !== 'public').map((a) => a.address);
  if (bad.length > 0) {
    throw new WebhookAddressError('non_public_address', `${hostname} resolves to a non-public address (${bad.join(', ')}); webhooks go to public addresses only.`);
  }
  // http or another port passed the syntax check only for D17's loopback; a public host never gets it.
  if (checked.needsLoopback) {
    throw checked.url.protocol !== 'https:'
      ? new WebhookAddressError('not_https', 'The URL must use https://.')
      : new WebhookAddressError('port_not_standard', 'The URL must use the standard https port (443).');
  }
  return { url: checked.url, hostname, addresses };
}
