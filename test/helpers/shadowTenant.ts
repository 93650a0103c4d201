/**
 * The "shadow tenant": every row of one shop copied into a new shop of another account and into a new shop of the same
 * account, under the same codes (order, document, product, claim and coupon codes, customer pseudonyms, session ids…),
 * with new primary keys, foreign keys remapped and values perturbed so that a leaked row is visible in an answer. A read
 * of the original shop must answer exactly as before: a query that lost its `shop_id` or `account_id` condition now
 * finds a second row under the code, or sums it in.
 *
 * The copy is driven by the catalogue (information_schema and pg_constraint), not by a list of tables:
 * - shop tables: every table with a `shop_id` column, rows of the source shop;
 * - keyless children: tables with neither `shop_id` nor `account_id` (order lines, tracking events, messages…), rows
 *   that reference a copied row through a foreign key (and no uncopied row of a shop table);
 * - account tables (an `account_id`, no `shop_id`: partners, suppliers, affiliate documents): for another account, the
 *   rows the copied rows reference are copied into it as well (a shop's rows never point into another tenant); for the
 *   same account they stay shared, as a second shop of that account would share them.
 * Everything runs in SQL in one transaction of the test's own database.
 */
import type { Db } from '../../src/db/knex.js';

/**
 * Tables never copied, each for its reason: the service's own data (keys, people, sessions, webhooks, audit and work
 * queues), which belongs to the service and not to the shop, or data a copy would make wrong rather than shadowed.
 */
export const SHADOW_EXCLUDED: Record<string, string> = {
  accounts: 'the tenants themselves: the targets are existing accounts',
  shops: 'the new shops are made explicitly, one per target',
  people: 'the service\'s people of the account (sign-in data), not a shop\'s',
  access_keys: 'the service\'s credentials',
  app_sessions: 'the service\'s sessions',
  oauth_connections: 'the service\'s OAuth grants',
  oauth_artifacts: 'the service\'s OAuth grants',
  person_invitations: 'the service\'s invitations of people',
  setup_tokens: 'the service\'s set-up tokens',
  mcp_sessions: 'the service\'s MCP sessions',
  mcp_session_questions: 'the service\'s MCP sessions',
  mcp_tasks: 'the service\'s MCP tasks (they name proposals)',
  webhook_endpoints: 'the service\'s webhook subscriptions (account\'s, not a shop\'s)',
  webhook_deliveries: 'the service\'s webhook deliveries',
  webhook_delivery_attempts: 'the service\'s webhook deliveries',
  webhook_dispatcher_workers: 'the service\'s worker registry',
  notifications: 'the service\'s notices to the account',
  outbox_events: 'the service\'s event log (audit); copies would fire webhooks and automations',
  email_outbox: 'the service\'s outgoing mail queue',
  proposals: 'drafts of the service\'s write workflow awaiting a person, named by a random draft id (no code to collide)',
  proposal_items: 'items of the service\'s drafts (see proposals)',
  content_writes: 'audit of the service\'s writes to the platform',
  coupon_confirmations: 'the service\'s pending confirmations of coupon writes',
  text_edit_batches: 'audit of people\'s text edits through the application',
  customer_exports: 'people\'s export runs through the application (files, links)',
  automation_runs: 'the service\'s automation executions (the automations are the account\'s)',
  automation_run_steps: 'the service\'s automation executions',
  automation_tags: 'tags written by the service\'s automation executions',
  automations: 'the account\'s automations, not a shop\'s',
  automation_versions: 'the account\'s automations, not a shop\'s',
  shop_credentials: 'secrets of the platform connection',
  affiliate_portal_sessions: 'partners\' sign-in sessions (the service\'s sessions)',
  affiliate_portal_links: 'partners\' one-time e-mail links (the service\'s tokens)',
  affiliate_partner_logins: 'partners\' passwords (the service\'s credentials)',
  sign_in_unknown_failures: 'the service\'s sign-in throttle',
  knex_migrations: 'the schema\'s own bookkeeping',
  knex_migrations_lock: 'the schema\'s own bookkeeping',
  plans: 'the service\'s price list',
  plan_features: 'the service\'s price list',
  account_entitlements: 'the account\'s plan, not a shop\'s',
};

/**
 * Columns that hold the id of another table's row without a foreign-key constraint (found as `*_id` columns of a copied
 * table with no constraint; the others are platform status numbers): remapped like a foreign key.
 */
export const SHADOW_IMPLICIT_KEYS: Record<string, string> = {
  'customer_rollups.last_order_id': 'orders', // the customer's identity is read from their last order
};

export interface ShadowTarget {
  /** Account of the new shop (the source's own account or another). */
  account: string;
  /** Code of the new shop; must be free in that account. */
  shop: string;
  /** Appended to free-text columns (names, titles, notes) of every copied row: its presence in an answer is a leak. */
  marker: string;
}

export interface ShadowCopy extends ShadowTarget {
  shopId: string;
  accountId: string;
  /** Rows copied per table. */
  rows: Record<string, number>;
  /** Tables left out for this target because a unique key of theirs would not allow a second row, with the key. */
  skipped: Record<string, string>;
}

interface Column {
  name: string;
  type: string;
  maxLength: number | null;
  generated: boolean;
}

interface ForeignKey {
  table: string;
  column: string;
  parent: string;
  parentColumn: string;
  nullable: boolean;
}

interface Catalogue {
  columns: Map<string, Column[]>;
  foreignKeys: ForeignKey[];
  /** Columns named in a check constraint, per table. */
  checked: Map<string, Set<string>>;
  /** Non-primary unique indexes: their columns, per table. */
  uniques: Map<string, string[][]>;
  /** Tables whose primary key is a bigint `id` with a sequence default, and the sequence expression. */
  sequences: Map<string, string>;
}

async function readCatalogue(db: Db): Promise<Catalogue> {
  const rows = (await db.raw(`
    select c.table_name, c.column_name, c.data_type, c.character_maximum_length, c.is_generated, c.column_default
    from information_schema.columns c join information_schema.tables t using (table_schema, table_name)
    where c.table_schema = 'public' and t.table_type = 'BASE TABLE' order by c.table_name, c.ordinal_position`)).rows;
  const columns = new Map<string, Column[]>();
  const sequences = new Map<string, string>();
  for (const r of rows) {
    if (!columns.has(r.table_name)) columns.set(r.table_name, []);
    columns.get(r.table_name)!.push({ name: r.column_name, type: r.data_type, maxLength: r.character_maximum_length, generated: r.is_generated === 'ALWAYS' });
    if (r.column_name === 'id' && r.data_type === 'bigint' && /^nextval\(/.test(r.column_default ?? '')) sequences.set(r.table_name, r.column_default);
  }
  const fks = (await db.raw(`
    select conrelid::regclass::text as tbl, confrelid::regclass::text as parent, a.attname as col, pa.attname as pcol, not a.attnotnull as nullable
    from pg_constraint k
    join pg_attribute a on a.attrelid = k.conrelid and a.attnum = k.conkey[1]
    join pg_attribute pa on pa.attrelid = k.confrelid and pa.attnum = k.confkey[1]
    where k.contype = 'f' and k.connamespace = 'public'::regnamespace and cardinality(k.conkey) = 1`)).rows;
  const foreignKeys: ForeignKey[] = fks.map((r: any) => ({ table: r.tbl, column: r.col, parent: r.parent, parentColumn: r.pcol, nullable: r.nullable }));
  for (const [key, parent] of Object.entries(SHADOW_IMPLICIT_KEYS)) {
    const [table, column] = key.split('.');
    foreignKeys.push({ table, column, parent, parentColumn: 'id', nullable: true });
  }
  const checks = (await db.raw(`
    select k.conrelid::regclass::text as tbl, a.attname as col from pg_constraint k
    join pg_attribute a on a.attrelid = k.conrelid and a.attnum = any(k.conkey)
    where k.contype = 'c' and k.connamespace = 'public'::regnamespace`)).rows;
  const checked = new Map<string, Set<string>>();
  for (const r of checks) {
    if (!checked.has(r.tbl)) checked.set(r.tbl, new Set());
    checked.get(r.tbl)!.add(r.col);
  }
  const uniqueRows = (await db.raw(`
    select c.relname as tbl, array(select a.attname from unnest(x.indkey) k join pg_attribute a on a.attrelid = c.oid and a.attnum = k)::text[] as cols
    from pg_index x join pg_class c on c.oid = x.indrelid
    where c.relnamespace = 'public'::regnamespace and x.indisunique and not x.indisprimary`)).rows;
  const uniques = new Map<string, string[][]>();
  for (const r of uniqueRows) {
    if (!uniques.has(r.tbl)) uniques.set(r.tbl, []);
    uniques.get(r.tbl)!.push(r.cols as string[]);
  }
  return { columns, foreignKeys, checked, uniques, sequences };
}

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
const lit = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** Free-text columns that get the marker: names, titles, notes and the like; never codes, states, keys or addresses. */
const FREE_TEXT = /(^|_)(name|title|note|notes|description|comment|subject|summary|label|reason|text|body|question|answer|company)$/;
const NOT_FREE_TEXT = /(code|status|state|type|kind|hash|email|url|slug|key|currency|language|country|token|guid|symbol|source|handle|locale|zone|session|event)/;
/** Integer columns that are amounts (counts, quantities), perturbed like money; other integers (positions, hours) are not. */
const AMOUNT_INTEGER = /(count|quantity|qty|units|clicks|visits|sessions|impressions|views|pieces|orders|buyers|customers|messages|conversions)/;

/**
 * Copies every row of shop `source.shop` of account `source.account` into a new shop per target (code `target.shop`
 * in account `target.account`), in one transaction. Returns what was copied per target.
 */
export async function shadowShop(db: Db, source: { account: string; shop: string }, targets: ShadowTarget[]): Promise<ShadowCopy[]> {
  const catalogue = await readCatalogue(db);
  const has = (table: string, column: string) => (catalogue.columns.get(table) ?? []).some((c) => c.name === column);
  const tables = [...catalogue.columns.keys()].filter((t) => !(t in SHADOW_EXCLUDED));
  const shopTables = new Set(tables.filter((t) => has(t, 'shop_id')));
  const accountTables = new Set(tables.filter((t) => !has(t, 'shop_id') && has(t, 'account_id')));
  const keyless = new Set(tables.filter((t) => !has(t, 'shop_id') && !has(t, 'account_id')));
  const copyable = (t: string) => shopTables.has(t) || accountTables.has(t) || keyless.has(t);
  const fksOf = (t: string) => catalogue.foreignKeys.filter((f) => f.table === t);
  for (const fk of catalogue.foreignKeys) {
    if (copyable(fk.table) && copyable(fk.parent) && (fk.parentColumn !== 'id' || !catalogue.sequences.has(fk.parent))) {
      throw new Error(`shadowShop: ${fk.table}.${fk.column} references ${fk.parent}.${fk.parentColumn}, not a sequence id: teach the copy this key`);
    }
  }

  return db.transaction(async (trx) => {
    const src = (await trx('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': source.account, 's.code': source.shop })
      .first('s.id', 's.account_id'));
    if (!src) throw new Error(`shadowShop: no shop ${source.account}/${source.shop}`);
    const copies: ShadowCopy[] = [];
    for (const target of targets) {
      const account = await trx('accounts').where({ code: target.account }).first('id');
      if (!account) throw new Error(`shadowShop: no account ${target.account}`);
      const sameAccount = String(account.id) === String(src.account_id);
      const tag = `shadow-${target.account}-${target.shop}`;
      // The new shop: the source's settings, the target's account and code, the marker in its name.
      const shopColumns = catalogue.columns.get('shops')!.filter((c) => c.name !== 'id' && !c.generated).map((c) => c.name);
      const shopExpr = shopColumns.map((c) => (c === 'account_id' ? String(account.id) : c === 'code' ? lit(target.shop) : c === 'name' ? `name || ${lit(target.marker)}` : q(c)));
      const shop = (await trx.raw(`insert into shops (${shopColumns.map(q).join(', ')}) select ${shopExpr.join(', ')} from shops where id = ? returning id`, [src.id])).rows[0];
      const shopId = String(shop.id);

      // 1. Which rows are copied: ids mapped old → new (sequence values drawn now), to a fixpoint over the foreign keys.
      await trx.raw('create temporary table if not exists shadow_map (tbl text, old_id bigint, new_id bigint, primary key (tbl, old_id)) on commit drop');
      await trx.raw('truncate shadow_map');
      const mapped = (t: string) => `(select old_id from shadow_map where tbl = ${lit(t)})`;
      const addRows = async (t: string, where: string): Promise<number> => (await trx.raw(
        `insert into shadow_map (tbl, old_id, new_id) select ${lit(t)}, x.id, ${catalogue.sequences.get(t)} from ${q(t)} x where ${where} on conflict do nothing`)).rowCount ?? 0;
      /** The rows of `t` that are copied, as a condition on alias x. */
      const selected = (t: string): string => {
        if (shopTables.has(t)) return `x.shop_id = ${src.id}`;
        if (catalogue.sequences.has(t)) return `x.id in ${mapped(t)}`;
        return keylessSelection(t);
      };
      // A keyless row is a copied row's child: it references a mapped row, and no row of a shop table left behind.
      const keylessSelection = (t: string): string => {
        const fks = fksOf(t).filter((f) => copyable(f.parent));
        const anyMapped = fks.filter((f) => catalogue.sequences.has(f.parent)).map((f) => `x.${q(f.column)} in ${mapped(f.parent)}`);
        const shopParents = fks.filter((f) => shopTables.has(f.parent)).map((f) => `(x.${q(f.column)} is null or x.${q(f.column)} in ${mapped(f.parent)})`);
        return `(${anyMapped.join(' or ') || 'false'})${shopParents.map((c) => ` and ${c}`).join('')}`;
      };
      for (const t of shopTables) if (catalogue.sequences.has(t)) await addRows(t, `x.shop_id = ${src.id}`);
      // Semi-naive: each round looks only at the foreign keys of tables that gained rows in the round before.
      let grown = new Set(shopTables);
      while (grown.size > 0) {
        const next = new Set<string>();
        for (const fk of catalogue.foreignKeys) {
          if (!copyable(fk.table) || !copyable(fk.parent)) continue;
          // Down: a keyless child of a copied row.
          if (grown.has(fk.parent) && keyless.has(fk.table) && catalogue.sequences.has(fk.table)) {
            if ((await addRows(fk.table, `x.${q(fk.column)} in ${mapped(fk.parent)} and ${keylessSelection(fk.table)}`)) > 0) next.add(fk.table);
          }
          // Up (another account only): the account's rows a copied row points at are copied into the target account.
          if (grown.has(fk.table) && !sameAccount && !shopTables.has(fk.parent) && catalogue.sequences.has(fk.parent)) {
            const referenced = `x.id in (select y.${q(fk.column)} from ${q(fk.table)} y where ${selected(fk.table).replace(/\bx\./g, 'y.')})`;
            if ((await addRows(fk.parent, referenced)) > 0) next.add(fk.parent);
          }
        }
        grown = next;
      }

      // 2. Insert table by table, parents first.
      const order = copyOrder(tables.filter((t) => copyable(t)), catalogue);
      const rows: Record<string, number> = {};
      const skipped: Record<string, string> = {};
      for (const t of order) {
        if (accountTables.has(t)) {
          // The account's own rows: shared by a second shop of the same account, copied into another account when referenced.
          if (sameAccount || !catalogue.sequences.has(t)) continue;
          if (Number((await trx.raw('select count(*)::int as n from shadow_map where tbl = ?', [t])).rows[0].n) === 0) continue;
        }
        const fks = new Map(fksOf(t).map((f) => [f.column, f]));
        // Columns whose value is new in the copy: the id, the shop, another account, and the keys to rows that are copied.
        const remapped = new Set(['id', 'shop_id', ...(sameAccount ? [] : ['account_id'])]);
        for (const [column, fk] of fks) {
          if (fk.parent === 'shops' || shopTables.has(fk.parent) || keyless.has(fk.parent) || !sameAccount) remapped.add(column);
        }
        const suffixed = new Set<string>();
        const offset = new Set<string>();
        let skip: string | null = null;
        for (const unique of catalogue.uniques.get(t) ?? []) {
          if (unique.some((c) => remapped.has(c) && c !== 'account_id')) continue;
          // A key of the row itself (a token, a handle) that must stay unique beside the original: it gets the tag.
          const own = unique.filter((c) => c !== 'account_id');
          const cols = (catalogue.columns.get(t) ?? []).filter((c) => own.includes(c.name));
          if (cols.length > 0 && cols.every((c) => ['text', 'character varying', 'integer'].includes(c.type) && !fks.has(c.name))) {
            for (const c of cols) (c.type === 'integer' ? offset : suffixed).add(c.name);
          } else {
            skip = `unique (${unique.join(', ')})`;
          }
        }
        if (skip) {
          if ((await trx.raw(`select exists (select 1 from ${q(t)} x where ${selected(t)}) as e`)).rows[0].e) skipped[t] = skip;
          continue;
        }
        const checked = catalogue.checked.get(t) ?? new Set<string>();
        const inUnique = new Set((catalogue.uniques.get(t) ?? []).flat());
        const columns = (catalogue.columns.get(t) ?? []).filter((c) => !c.generated);
        const expr = columns.map((c): string => {
          const x = `x.${q(c.name)}`;
          if (c.name === 'id' && catalogue.sequences.has(t)) return 'm0.new_id';
          if (c.name === 'shop_id') return shopId;
          if (c.name === 'account_id') return String(account.id);
          const fk = fks.get(c.name);
          if (fk) {
            if (fk.parent === 'shops') return `case when ${x} is null then null else ${shopId} end`;
            if (fk.parent === 'accounts') return String(account.id);
            // A copied parent: its copy; a parent left behind: the same row in the same account, nothing in another.
            const kept = sameAccount ? x : 'null';
            return copyable(fk.parent) ? `coalesce(${q(`m_${c.name}`)}.new_id, ${kept})` : kept;
          }
          if (suffixed.has(c.name)) return `${x} || ${lit(`-${tag}`)}`;
          if (offset.has(c.name)) return `${x} + 1000000`;
          if (checked.has(c.name) || inUnique.has(c.name)) return x;
          if (['numeric', 'double precision', 'real'].includes(c.type)) return `${x} + 1`;
          if (['integer', 'bigint', 'smallint'].includes(c.type) && AMOUNT_INTEGER.test(c.name)) return `${x} + 1`;
          if (['text', 'character varying'].includes(c.type) && FREE_TEXT.test(c.name) && !NOT_FREE_TEXT.test(c.name)) {
            const fits = c.maxLength === null ? 'true' : `length(${x}) + ${target.marker.length} <= ${c.maxLength}`;
            return `case when ${x} is not null and ${fits} then ${x} || ${lit(target.marker)} else ${x} end`;
          }
          return x;
        });
        // The new ids by joins on the map (hash joins: far faster than a lookup per row and column).
        const joins = [
          ...(catalogue.sequences.has(t) ? [`join shadow_map m0 on m0.tbl = ${lit(t)} and m0.old_id = x.id`] : []),
          ...[...fks.values()].filter((fk) => copyable(fk.parent) && fk.parent !== 'shops' && fk.parent !== 'accounts')
            .map((fk) => `left join shadow_map ${q(`m_${fk.column}`)} on ${q(`m_${fk.column}`)}.tbl = ${lit(fk.parent)} and ${q(`m_${fk.column}`)}.old_id = x.${q(fk.column)}`),
        ];
        const where = shopTables.has(t) || !catalogue.sequences.has(t) ? selected(t) : 'true';
        const result = await trx.raw(`insert into ${q(t)} (${columns.map((c) => q(c.name)).join(', ')}) select ${expr.join(', ')} from ${q(t)} x ${joins.join(' ')} where ${where}`);
        if (result.rowCount) rows[t] = result.rowCount;
      }
      copies.push({ ...target, shopId, accountId: String(account.id), rows, skipped });
    }
    return copies;
  });
}

/** The tables in an order where every parent (through a foreign key) comes before its children; self-references aside. */
function copyOrder(tables: string[], catalogue: Catalogue): string[] {
  const done = new Set<string>();
  const order: string[] = [];
  const visit = (t: string, path: Set<string>) => {
    if (done.has(t)) return;
    if (path.has(t)) throw new Error(`shadowShop: foreign keys form a cycle through ${t}`);
    path.add(t);
    for (const fk of catalogue.foreignKeys) if (fk.table === t && fk.parent !== t && tables.includes(fk.parent)) visit(fk.parent, path);
    path.delete(t);
    done.add(t);
    order.push(t);
  };
  for (const t of [...tables].sort()) visit(t, new Set());
  return order;
}
