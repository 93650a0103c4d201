/**
 * Endpoint secrets (D18): 32 random bytes shown once as `whsec_` + base64, stored encrypted with AES-256-GCM under
 * SECRETS_KEY. The additional data binds a ciphertext to its endpoint, so a stored secret cannot be moved to another row.
 */
import crypto from 'node:crypto';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function generateEndpointSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

function additionalData(endpointId: string): Buffer {
  return Buffer.from(`webhook_endpoint:${endpointId}`, 'utf8');
}

/** version (1 byte) | IV (12) | tag (16) | ciphertext */
export function encryptSecret(key: Buffer, endpointId: string, secret: string): Buffer {
  const iv = crypto.randomBytes(IV_BYTES);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(additionalData(endpointId));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), ciphertext]);
}

/** Throws when the key is wrong or the stored value was altered. */
export function decryptSecret(key: Buffer, endpointId: string, stored: Buffer): string {
  if (stored[0] !== VERSION) throw new Error(`Unknown secret format ${stored[0]}`);
  const iv = stored.subarray(1, 1 + IV_BYTES);
  const tag = stored.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(additionalData(endpointId));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(stored.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}
