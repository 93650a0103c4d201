/**
 * Endpoint secrets (D18): 32 random bytes shown once as `whsec_` + base64, stored encrypted with AES-256-GCM under
 * SECRETS_KEY. The additional data binds a ciphertext to its endpoint, so a stored secret cannot be moved to another row.
 */
import crypto from 'node:crypto';

/** v1: written before key ids; read by trying the current key, then the previous one. */
const VERSION_UNTAGGED = 1;
/** v2: carries the id of the key it was encrypted under, so a rotation knows which rows to re-encrypt. */
const VERSION_TAGGED = 2;
const KEY_ID_BYTES = 4;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The keys a process holds: SECRETS_KEY encrypts; SECRETS_KEY_PREVIOUS is only read, during a rotation. */
export interface SecretKeys {
  current: Buffer;
  previous?: Buffer | null;
}

export function generateEndpointSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

function additionalData(endpointId: string): Buffer {
  return Buffer.from(`webhook_endpoint:${endpointId}`, 'utf8');
}

/** A short, non-secret fingerprint of a key (first 4 bytes of its SHA-256), stored beside each ciphertext. */
export function keyId(key: Buffer): Buffer {
  return crypto.createHash('sha256').update(key).digest().subarray(0, KEY_ID_BYTES);
}

/** version 2 (1 byte) | key id (4) | IV (12) | tag (16) | ciphertext */
export function encryptSecret(key: Buffer, endpointId: string, secret: string): Buffer {
  return sealBound(key, additionalData(endpointId), secret);
}

/** Encrypts under SECRETS_KEY bound to `aad` (the row it belongs to); shop platform credentials use it too. */
export function sealBound(key: Buffer, aad: Buffer, secret: string): Buffer {
  const iv = crypto.randomBytes(IV_BYTES);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION_TAGGED]), keyId(key), iv, cipher.getAuthTag(), ciphertext]);
}

function decryptWith(key: Buffer, aad: Buffer, body: Buffer): string {
  const iv = body.subarray(0, IV_BYTES);
  const tag = body.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(aad);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(body.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}

/**
 * Decrypts with the current key or, during a rotation, the previous one. Throws when neither key fits or the stored
 * value was altered. `keys` may be a bare key (the current one).
 */
export function decryptSecret(keys: Buffer | SecretKeys, endpointId: string, stored: Buffer): string {
  return openBound(keys, additionalData(endpointId), stored);
}

/** Decrypts what sealBound wrote, with the current key or, during a rotation, the previous one. */
export function openBound(keys: Buffer | SecretKeys, aad: Buffer, stored: Buffer): string {
  const { current, previous } = Buffer.isBuffer(keys) ? { current: keys, previous: null } : keys;
  const candidates = previous ? [current, previous] : [current];
  if (stored[0] === VERSION_TAGGED) {
    const id = stored.subarray(1, 1 + KEY_ID_BYTES);
    const key = candidates.find((k) => keyId(k).equals(id));
    if (!key) throw new Error(`The secret was encrypted under another SECRETS_KEY (key id ${id.toString('hex')}); set SECRETS_KEY_PREVIOUS to that key.`);
    return decryptWith(key, aad, stored.subarray(1 + KEY_ID_BYTES));
  }
  if (stored[0] !== VERSION_UNTAGGED) throw new Error(`Unknown secret format ${stored[0]}`);
  let lastError: unknown;
  for (const key of candidates) {
    try {
      return decryptWith(key, aad, stored.subarray(1));
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

/** True unless the value is already encrypted under `current` in the current format. */
export function needsReencryption(current: Buffer, stored: Buffer): boolean {
  return stored[0] !== VERSION_TAGGED || !stored.subarray(1, 1 + KEY_ID_BYTES).equals(keyId(current));
}
