/**
 * The Medusa forwarder's signature (docs/medusa.md): HMAC-SHA256 over `<timestamp>.<raw body>` as `v1=<hex>`, and a
 * timestamp at most 300 seconds away from now, either way; 301 seconds is stale even with a right signature.
 */
import crypto from 'node:crypto';
import test from 'ava';
import { verifyForwarderSignature } from '../../src/platforms/medusa/inbound.js';

const secret = 'forwarder-secret';
const body = Buffer.from('{"version":1}');
const NOW_S = 1_790_000_000;
const signed = (timestamp: number, key = secret) => `v1=${crypto.createHmac('sha256', key).update(`${timestamp}.`).update(body).digest('hex')}`;

test('When the timestamp is 300 seconds old or ahead, then a right signature is accepted; at 301 seconds it is stale', (t) => {
  for (const offset of [-300, 0, 300]) t.is(verifyForwarderSignature(secret, String(NOW_S + offset), signed(NOW_S + offset), body, NOW_S), 'ok', `offset ${offset}`);
  for (const offset of [-301, 301]) t.is(verifyForwarderSignature(secret, String(NOW_S + offset), signed(NOW_S + offset), body, NOW_S), 'stale_timestamp', `offset ${offset}`);
});

test('When the signature is of another secret, another body or missing, then it is refused; one right signature among several is enough', (t) => {
  t.is(verifyForwarderSignature(secret, String(NOW_S), signed(NOW_S, 'other'), body, NOW_S), 'bad_signature');
  t.is(verifyForwarderSignature(secret, String(NOW_S), signed(NOW_S), Buffer.from('{"version":2}'), NOW_S), 'bad_signature');
  t.is(verifyForwarderSignature(secret, String(NOW_S), undefined, body, NOW_S), 'bad_signature');
  t.is(verifyForwarderSignature(secret, 'soon', signed(NOW_S), body, NOW_S), 'bad_signature');
  t.is(verifyForwarderSignature(secret, String(NOW_S), `${signed(NOW_S, 'old')}, ${signed(NOW_S)}`, body, NOW_S), 'ok');
});
