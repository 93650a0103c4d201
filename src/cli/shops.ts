/** `shops list|remove|restore`: connect and disconnect shops (their sync Schedules follow within a minute, P20). */
import { parseArgs } from 'node:util';
import type { Db } from '../db/knex.js';
import { findAccountByCode } from '../queries/shops.js';
import type { PlatformRegistry } from '../platforms/registry.js';
import { print, UsageError } from './output.js';
import { connectCommand, connectUsage } from './setup.js';

export const shopsUsage = `  shops list [--account CODE]
  shops remove CODE [--account CODE]    (its sync Schedule is deleted; data and events stay)
  shops restore CODE [--account CODE] [--credential name=value ...]
         (credentials kept by \`shops remove\` stay; a disconnected shop needs its credentials again, checked by a test connection)
${connectUsage}`;

export async function shopsCommand(db: Db, argv: string[], setup?: { platforms: PlatformRegistry; secretsKey: Buffer }): Promise<void> {
  const [action, ...rest] = argv;
  if (setup && (await connectCommand(db, setup.platforms, setup.secretsKey, action, rest))) return;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { account: { type: 'string', default: 'demo' }, json: { type: 'boolean', default: false } } });
  const account = await findAccountByCode(db, values.account!);
  if (!account) throw new UsageError(`No account \`${values.account}\`.`);
  const json = values.json!;
  if (action === 'list') {
    const shops = await db('shops as s').where('s.account_id', account.id).orderBy('s.code').select('s.code', 's.name', 's.platform', 's.removed_at', 's.last_synced_at');
    print(json, { shops }, shops.map((s) => `${s.code.padEnd(6)} ${s.platform.padEnd(6)} ${s.removed_at ? 'removed' : 'live   '} last sync ${s.last_synced_at?.toISOString() ?? '-'}  ${s.name}`).join('\n'));
    return;
  }
  // `restore` is the setup module's (connectCommand above): it may need the credentials again.
  if (action !== 'remove') throw new UsageError(shopsUsage);
  const code = positionals[0];
  if (!code) throw new UsageError(`shops ${action} CODE`);
  const updated = await db('shops').where({ account_id: account.id, code }).update({ removed_at: new Date() });
  if (!updated) throw new UsageError(`No shop \`${code}\` in account \`${account.code}\`.`);
  print(json, { code, removed: true }, `Shop ${code} removed; its sync Schedule follows within a minute.`);
}
