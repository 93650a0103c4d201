/** Server secrets for the embedded default: generated once and kept under the data folder; production sets them in the environment. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { decodeKey32, type Config } from './config/index.js';

interface LocalSecrets {
  cursorSecret: string;
  /** Encrypts webhook endpoint secrets (D18); base64. Added later, so older files may lack it. */
  secretsKey?: string;
}

export interface Secrets {
  cursorSecret: string;
  /** The 32-byte AES-256-GCM key of SECRETS_KEY. */
  secretsKey: Buffer;
  /** SECRETS_KEY_PREVIOUS during a key rotation, else null. */
  previousSecretsKey: Buffer | null;
}

export function loadSecrets(config: Config): Secrets {
  const previousSecretsKey = config.SECRETS_KEY_PREVIOUS ? decodeKey32(config.SECRETS_KEY_PREVIOUS)! : null;
  if (config.CURSOR_SECRET && config.SECRETS_KEY) return { cursorSecret: config.CURSOR_SECRET, secretsKey: decodeKey32(config.SECRETS_KEY)!, previousSecretsKey };
  const file = path.join(config.DATA_DIR, 'secrets.json');
  const stored: Partial<LocalSecrets> = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  const local: LocalSecrets = {
    cursorSecret: stored.cursorSecret ?? crypto.randomBytes(32).toString('base64url'),
    secretsKey: stored.secretsKey ?? crypto.randomBytes(32).toString('base64'),
  };
  if (local.cursorSecret !== stored.cursorSecret || local.secretsKey !== stored.secretsKey) {
    fs.mkdirSync(config.DATA_DIR, { recursive: true });
    fs.writeFileSync(file, JSON.stringify(local), { mode: 0o600 });
  }
  return {
    cursorSecret: config.CURSOR_SECRET ?? local.cursorSecret,
    secretsKey: decodeKey32(config.SECRETS_KEY ?? local.secretsKey!)!,
    previousSecretsKey,
  };
}
