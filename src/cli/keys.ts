/** `keys create|list|revoke`: the person-in-the-application actions on access keys (D11). */
import { parseArgs } from 'node:util';
import { durationMs } from '../config/index.js';
import { createAccessKey, listAccessKeys, parseScopes, revokeAccessKey } from '../auth/keys.js';
import { allInterfaces, isWriteMode, writeModes, type Interface } from '../auth/scopes.js';
import type { Db } from '../db/knex.js';
import { findAccountByCode, listShops } from '../queries/shops.js';
import { print, UsageError } from './output.js';

async function account(db: Db, code: string) {
  const found = await findAccountByCode(db, code);
  if (!found) throw new UsageError(`No account \`${code}\`.`);
  return found;
}

function parseInterfaces(text: string): Interface[] {
  const list = text.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = list.filter((i) => !(allInterfaces as readonly string[]).includes(i));
  if (list.length === 0 || bad.length > 0) throw new UsageError(`--interfaces must be rest, mcp or rest,mcp (got ${text}).`);
  return [...new Set(list)] as Interface[];
}

export async function keysCommand(db: Db, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      name: { type: 'string' }, scopes: { type: 'string' }, interfaces: { type: 'string' }, shops: { type: 'string' },
      account: { type: 'string', default: 'demo' }, 'expires-in': { type: 'string' }, 'write-mode': { type: 'string', default: 'proposals' }, json: { type: 'boolean', default: false },
    },
  });
  const acct = await account(db, values.account!);
  const json = values.json!;
  if (action === 'create') {
    if (!values.name) throw new UsageError('--name is required.');
    if (!values.scopes) throw new UsageError('--scopes is required (all, or a comma list).');
    if (!values.interfaces) throw new UsageError('--interfaces is required (rest, mcp or rest,mcp).');
    if (!values.shops) throw new UsageError('--shops is required (all, or a comma list of shop codes).');
    let scopes;
    try {
      scopes = parseScopes(values.scopes);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    let shopCodes: string[] | null = null;
    if (values.shops !== 'all') {
      shopCodes = [...new Set(values.shops.split(',').map((s) => s.trim()).filter(Boolean))];
      const known = new Set((await listShops(db, acct.id, null)).map((s) => s.code));
      const unknown = shopCodes.filter((c) => !known.has(c));
      if (shopCodes.length === 0 || unknown.length > 0) throw new UsageError(`Unknown shop(s) for account ${acct.code}: ${unknown.join(', ') || '(none given)'}. Known: ${[...known].join(', ')}`);
    }
    let expiresAt: Date | null = null;
    if (values['expires-in']) {
      try {
        expiresAt = new Date(Date.now() + durationMs(values['expires-in']));
      } catch {
        throw new UsageError('--expires-in must be a duration such as 12h or 30d.');
      }
    }
    const writeMode = values['write-mode']!;
    if (!isWriteMode(writeMode)) throw new UsageError(`--write-mode must be one of ${writeModes.join(', ')} (got ${writeMode}).`);
    const created = await createAccessKey(db, { accountId: acct.id, name: values.name, scopes, interfaces: parseInterfaces(values.interfaces), shopCodes, expiresAt, createdBy: 'cli', writeMode });
    print(json, { id: created.id, key: created.key, expiresAt: expiresAt?.toISOString() ?? null }, `Created ${created.id}. The key is shown only now:\n\n  ${created.key}\n`);
    return;
  }
  if (action === 'list') {
    const keys = await listAccessKeys(db, acct.id);
    const lines = keys.map((k) => `${k.id}  ${k.hint}  ${k.name}  [${k.interfaces.join(',')}]  shops=${k.shops === 'all' ? 'all' : k.shops.join(',')}  write=${k.writeMode}  ${k.revokedAt ? `revoked ${k.revokedAt}` : k.issuerDisabled ? 'stopped (its person is disabled)' : k.expiresAt ? `expires ${k.expiresAt}` : 'active'}`);
    print(json, { keys }, lines.length ? lines.join('\n') : '(no keys)');
    return;
  }
  if (action === 'revoke') {
    const id = positionals[0];
    if (!id) throw new UsageError('keys revoke ID');
    if (!(await revokeAccessKey(db, acct.id, id))) throw new UsageError(`No key ${id} in account ${acct.code}.`);
    print(json, { id, revoked: true }, `Revoked ${id}.`);
    return;
  }
  throw new UsageError('keys create|list|revoke');
}
