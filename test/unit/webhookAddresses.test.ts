/** The endpoint address rules (SPEC "Endpoint rules", D17) over a table of addresses and URL forms, with a controlled DNS. */
import test from 'ava';
import { classifyAddress, verifyDestination, WebhookAddressError } from '../../src/webhooks/addresses.js';
import { fakeDns } from '../helpers/webhooks.js';

const strict = { allowLoopback: false };
const loopbackAllowed = { allowLoopback: true };

/** [address, kind] — addresses as a resolver returns them. */
const addressTable: [string, 'public' | 'loopback' | 'non_public'][] = [
  ['93.184.215.14', 'public'],
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['2606:4700:4700::1111', 'public'],
  ['2a00:1450:4001:80b::200e', 'public'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  ['0.0.0.0', 'non_public'],
  ['0.1.2.3', 'non_public'],
  ['10.0.0.1', 'non_public'],
  ['10.255.255.255', 'non_public'],
  ['172.16.0.1', 'non_public'],
  ['172.31.255.254', 'non_public'],
  ['192.168.1.1', 'non_public'],
  ['100.64.0.1', 'non_public'], // shared address space (CGNAT), also VPN ranges such as Tailscale
  ['100.100.100.200', 'non_public'], // Alibaba Cloud metadata (in 100.64/10)
  ['169.254.169.254', 'non_public'], // AWS / GCP / Azure metadata (link-local)
  ['169.254.0.1', 'non_public'],
  ['168.63.129.16', 'non_public'], // Azure wire server
  ['192.0.0.192', 'non_public'], // Oracle Cloud metadata (IETF protocol assignments)
  ['192.0.2.10', 'non_public'], // TEST-NET-1
  ['198.18.0.1', 'non_public'], // benchmarking
  ['198.51.100.7', 'non_public'],
  ['203.0.113.9', 'non_public'],
  ['224.0.0.1', 'non_public'], // multicast
  ['240.0.0.1', 'non_public'], // reserved
  ['255.255.255.255', 'non_public'],
  ['::', 'non_public'],
  ['fe80::1', 'non_public'], // link-local
  ['fc00::1', 'non_public'], // unique-local
  ['fd00:ec2::254', 'non_public'], // AWS metadata over IPv6 (unique-local)
  ['fec0::1', 'non_public'], // deprecated site-local
  ['ff02::1', 'non_public'], // multicast
  ['::ffff:127.0.0.1', 'non_public'], // IPv4-mapped loopback is not D17's loopback
  ['::ffff:10.1.2.3', 'non_public'], // IPv4-mapped private
  ['::ffff:169.254.169.254', 'non_public'], // IPv4-mapped metadata
  ['::ffff:8.8.8.8', 'public'], // IPv4-mapped public: judged as 8.8.8.8
  ['64:ff9b::a00:1', 'non_public'], // NAT64 of 10.0.0.1
  ['64:ff9b::a9fe:a9fe', 'non_public'], // NAT64 of 169.254.169.254
  ['64:ff9b::808:808', 'public'], // NAT64 of 8.8.8.8
  ['64:ff9b:1::a00:1', 'non_public'], // local-use NAT64
  ['2002:a00:1::1', 'non_public'], // 6to4 of 10.0.0.1
  ['2002:7f00:1::1', 'non_public'], // 6to4 of 127.0.0.1
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'non_public'], // Teredo
  ['2001:db8::1', 'non_public'], // documentation
  ['::a00:1', 'non_public'], // IPv4-compatible (deprecated)
  ['100::1', 'non_public'], // discard-only
];

test(`When ${addressTable.length} addresses are classified, then only global unicast is public and only 127/8 and ::1 are loopback`, (t) => {
  for (const [address, kind] of addressTable) t.is(classifyAddress(address).kind, kind, address);
});

async function rejection(url: string, policy = strict, dns = fakeDns({ 'hooks.example.com': ['93.184.215.14'] })): Promise<string | null> {
  try {
    await verifyDestination(url, policy, dns.resolve);
    return null;
  } catch (error) {
    if (error instanceof WebhookAddressError) return error.reason;
    throw error;
  }
}

/** [url, reason or null, policy] — URL forms: scheme, port, credentials, IP literals in every notation. */
const urlTable: [string, string | null, typeof strict?][] = [
  ['https://hooks.example.com/path?x=1', null],
  ['https://hooks.example.com:443/path', null],
  ['https://93.184.215.14/hook', null],
  ['https://[2606:4700:4700::1111]/hook', null],
  ['http://hooks.example.com/path', 'not_https'],
  ['ftp://hooks.example.com/', 'not_https'],
  ['https://hooks.example.com:8443/path', 'port_not_standard'],
  ['https://hooks.example.com:80/path', 'port_not_standard'],
  ['https://user:pass@hooks.example.com/', 'credentials_in_url'],
  ['https://hooks.example.com/#frag', 'fragment_in_url'],
  ['not a url', 'invalid_url'],
  ['https://localhost/', 'loopback_name'],
  ['https://app.localhost/', 'loopback_name'],
  ['https://127.0.0.1/', 'non_public_address'],
  ['https://2130706433/', 'non_public_address'], // decimal 127.0.0.1
  ['https://0x7f000001/', 'non_public_address'], // hex 127.0.0.1
  ['https://0177.0.0.1/', 'non_public_address'], // octal 127.0.0.1
  ['https://127.1/', 'non_public_address'], // short form
  ['https://10.0.0.1/', 'non_public_address'],
  ['https://169.254.169.254/latest/meta-data/', 'non_public_address'],
  ['https://[::1]/', 'non_public_address'],
  ['https://[::ffff:127.0.0.1]/', 'non_public_address'],
  ['https://[::ffff:a9fe:a9fe]/', 'non_public_address'],
  ['https://[fd00::1]/', 'non_public_address'],
  ['https://[fe80::1]/', 'non_public_address'],
  ['https://[64:ff9b::a00:1]/', 'non_public_address'],
  ['https://unknown.example.net/', 'unresolvable'],
  // D17: loopback over http on any port, only with the allowance; everything else non-public stays blocked.
  ['http://127.0.0.1:8080/hook', null, loopbackAllowed],
  ['http://localhost:3000/hook', null, loopbackAllowed],
  ['http://[::1]:9000/hook', null, loopbackAllowed],
  ['http://10.0.0.1:8080/hook', 'non_public_address', loopbackAllowed],
  ['http://169.254.169.254/', 'non_public_address', loopbackAllowed],
  ['http://[::ffff:127.0.0.1]:8080/', 'non_public_address', loopbackAllowed],
  ['http://hooks.example.com/path', 'not_https', loopbackAllowed], // http to a public host: never
  ['https://hooks.example.com:8443/path', 'port_not_standard', loopbackAllowed],
];

test(`When ${urlTable.length} URL forms are checked, then https on 443 to public addresses passes and every other form is refused with its reason`, async (t) => {
  const dns = fakeDns({ 'hooks.example.com': ['93.184.215.14'], localhost: ['127.0.0.1', '::1'] });
  for (const [url, reason, policy] of urlTable) t.is(await rejection(url, policy ?? strict, dns), reason, url);
});

test('When a name resolves to one public and one private address, then the whole name is refused', async (t) => {
  const dns = fakeDns({ 'mixed.example.com': ['93.184.215.14', '10.0.0.5'], 'metadata.example.com': ['169.254.169.254'], 'v6.example.com': ['2606:4700:4700::1111', 'fd12::1'] });
  t.is(await rejection('https://mixed.example.com/', strict, dns), 'non_public_address');
  t.is(await rejection('https://metadata.example.com/', strict, dns), 'non_public_address');
  t.is(await rejection('https://v6.example.com/', strict, dns), 'non_public_address');
});

test('When a name resolves to loopback and another address under the allowance, then it is refused (all addresses must be loopback)', async (t) => {
  const dns = fakeDns({ 'both.test': ['127.0.0.1', '93.184.215.14'] });
  t.is(await rejection('http://both.test:8080/', loopbackAllowed, dns), 'non_public_address');
});

test('When the resolver fails temporarily, then the refusal is retryable; when the name does not exist, it is not', async (t) => {
  const flaky = async () => {
    throw Object.assign(new Error('timeout'), { code: 'EAI_AGAIN' });
  };
  const error = await t.throwsAsync(verifyDestination('https://hooks.example.com/', strict, flaky), { instanceOf: WebhookAddressError });
  t.is(error.reason, 'dns_error');
  t.true(error.retryable);
  const gone = await t.throwsAsync(verifyDestination('https://gone.example.com/', strict, fakeDns().resolve), { instanceOf: WebhookAddressError });
  t.is(gone.reason, 'unresolvable');
  t.false(gone.retryable);
});

test('When a destination is verified, then the verified addresses are returned for the connection', async (t) => {
  const dns = fakeDns({ 'hooks.example.com': ['93.184.215.14', '2606:4700:4700::1111'] });
  const verified = await verifyDestination('https://hooks.example.com/x', strict, dns.resolve);
  t.deepEqual(verified.addresses, [{ address: '93.184.215.14', family: 4 }, { address: '2606:4700:4700::1111', family: 6 }]);
  t.is(verified.hostname, 'hooks.example.com');
});
