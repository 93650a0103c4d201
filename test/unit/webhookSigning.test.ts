/** Endpoint secrets (D18) and the signed request (SPEC "Request headers", "Signature"), checked by an independent verifier. */
import crypto from 'node:crypto';
import test from 'ava';
import { deliveryHeaders } from '../../src/events/catalogue.js';
import { decryptSecret, encryptSecret, generateEndpointSecret, keyId, needsReencryption } from '../../src/webhooks/secrets.js';
import { deliveryRequestHeaders } from '../../src/webhooks/signature.js';
import { verifyWebhook } from '../helpers/receiver.js';

test('When a secret is generated, then it is whsec_ + base64 of 32 bytes, and it decrypts only with its key and its endpoint', (t) => {
  const secret = generateEndpointSecret();
  t.regex(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  t.is(Buffer.from(secret.slice(6), 'base64').length, 32);
  const key = crypto.randomBytes(32);
  const stored = encryptSecret(key, '7', secret);
  t.false(stored.toString('latin1').includes(secret.slice(6)), 'stored encrypted');
  t.is(decryptSecret(key, '7', stored), secret);
  t.throws(() => decryptSecret(crypto.randomBytes(32), '7', stored), undefined, 'another key');
  t.throws(() => decryptSecret(key, '8', stored), undefined, 'another endpoint');
  const tampered = Buffer.from(stored);
  tampered[tampered.length - 1] ^= 1;
  t.throws(() => decryptSecret(key, '7', tampered), undefined, 'altered');
});

/** The format written before key ids (v1): version 1 | IV | tag | ciphertext. */
function encryptUntagged(key: Buffer, endpointId: string, secret: string): Buffer {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`webhook_endpoint:${endpointId}`, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([1]), iv, cipher.getAuthTag(), ciphertext]);
}

test('When SECRETS_KEY is rotated, then secrets under the old key read with SECRETS_KEY_PREVIOUS, new ones are written under the new key, and an unknown key is named', (t) => {
  const secret = generateEndpointSecret();
  const oldKey = crypto.randomBytes(32);
  const newKey = crypto.randomBytes(32);
  const rotating = { current: newKey, previous: oldKey };
  const underOld = encryptSecret(oldKey, '7', secret);
  t.deepEqual(underOld.subarray(1, 5), keyId(oldKey), 'the ciphertext names its key');
  t.is(decryptSecret(rotating, '7', underOld), secret);
  t.is(decryptSecret(rotating, '7', encryptSecret(newKey, '7', secret)), secret);
  t.throws(() => decryptSecret(newKey, '7', underOld), { message: new RegExp(`key id ${keyId(oldKey).toString('hex')}.*SECRETS_KEY_PREVIOUS`) });
  // Rows written before key ids are read with either key.
  t.is(decryptSecret(rotating, '7', encryptUntagged(oldKey, '7', secret)), secret);
  t.is(decryptSecret(rotating, '7', encryptUntagged(newKey, '7', secret)), secret);
  t.throws(() => decryptSecret({ current: newKey, previous: crypto.randomBytes(32) }, '7', encryptUntagged(oldKey, '7', secret)));
  t.true(needsReencryption(newKey, underOld));
  t.true(needsReencryption(newKey, encryptUntagged(newKey, '7', secret)));
  t.false(needsReencryption(newKey, encryptSecret(newKey, '7', secret)));
});

test('When a request is signed, then it carries exactly the catalogue\'s headers and verifies on the raw bytes within 5 minutes', (t) => {
  const secret = generateEndpointSecret();
  const body = JSON.stringify({ event_id: crypto.randomUUID(), text: 'žluťoučký kůň' });
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = deliveryRequestHeaders({ eventType: 'order.created', eventId: 'e', deliveryId: '42', secret, body, timestamp });
  t.deepEqual(Object.keys(headers).sort(), deliveryHeaders.map((h) => h.name).sort());
  t.is(headers['User-Agent'], 'Service-Webhooks/1');
  t.is(headers['X-Service-Delivery'], '42');
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const raw = Buffer.from(body, 'utf8');
  t.is(verifyWebhook(secret, lower, raw), null);
  t.is(verifyWebhook(secret, { ...lower, 'x-service-signature': `v0=abc, ${lower['x-service-signature']}` }, raw), null, 'takes the v1= value among several');
  t.is(verifyWebhook('whsec_other', lower, raw), 'signature mismatch');
  t.is(verifyWebhook(secret, lower, Buffer.from(JSON.stringify(JSON.parse(body)).replace(':', ': '))), 'signature mismatch', 're-serialised JSON does not verify');
  t.is(verifyWebhook(secret, lower, raw, timestamp + 301), 'timestamp outside the 5-minute tolerance');
  t.is(verifyWebhook(secret, { ...lower, 'x-service-timestamp': 'soon' }, raw), 'missing or non-numeric timestamp');
  t.is(verifyWebhook(secret, { ...lower, 'x-service-signature': 'sha256=abc' }, raw), 'no v1= signature');
});
