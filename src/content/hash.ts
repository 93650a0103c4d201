/**
 * Field hashes and fingerprints of catalogue texts, one definition for reads and for content-change events (SPEC
 * "Content-change events"): a field's hash is the SHA-256 of its UTF-8 text, a missing value hashing as the empty
 * string; an entity's fingerprint is the SHA-256 of its `field:hash` lines in the fixed field order, so it changes
 * exactly when one field does.
 */
import crypto from 'node:crypto';

const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

export function fieldHash(text: string | null | undefined): string {
  return sha256(text ?? '');
}

export function fingerprint(fields: ReadonlyArray<readonly [string, string | null]>): string {
  return sha256(fields.map(([name, text]) => `${name}:${fieldHash(text)}`).join('\n'));
}
