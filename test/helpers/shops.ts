/** Shops of the test data by account code and shop code, read straight from the database (one copy, issue 22 point 6). */
import type { Db } from '../../src/db/knex.js';

export interface ShopInfo {
  id: string;
  accountId: string;
  timeZone: string;
}

/** The shop `code` of account `account`; throws when it does not exist (a test's data assumption is wrong). */
export async function shopOf(db: Db, account: string, code: string): Promise<ShopInfo> {
  const row = await db('shops as s').join('accounts as a', 'a.id', 's.account_id')
    .where({ 'a.code': account, 's.code': code }).first('s.id', 's.account_id', 's.time_zone');
  if (!row) throw new Error(`no shop ${account}/${code}`);
  return { id: String(row.id), accountId: String(row.account_id), timeZone: row.time_zone };
}

/** The id of shop `code` of account `account`. */
export async function shopId(db: Db, account: string, code: string): Promise<string> {
  return (await shopOf(db, account, code)).id;
}
