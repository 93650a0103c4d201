/** What a capability handler gets: the caller's account, scopes and shops, never HTTP or MCP. */
import type { Db } from '../db/knex.js';
import type { Interface, Scope, WriteMode } from '../auth/scopes.js';
import type { PlatformRegistry } from '../platforms/registry.js';
import type { TemporalAccess } from '../temporal/access.js';

export interface AccountRef {
  id: string;
  code: string;
  timeZone: string;
}

export interface ShopRef {
  id: string;
  code: string;
  name: string;
  currency: string;
  timeZone: string;
}

/** The authenticated caller, as resolved from an access key (later also an OAuth token). */
export interface Caller {
  account: AccountRef;
  scopes: ReadonlySet<Scope>;
  /** null = every shop of the account, including future ones. */
  shopCodes: ReadonlySet<string> | null;
  credentialId: string;
  interface: Interface;
  /** What write tools the credential's holder gets over MCP (D13); `proposals` by default. */
  writeMode: WriteMode;
  /** How the caller authenticated: an access key (absent = key) or an OAuth connection's token (D28). */
  credentialType?: 'access_key' | 'oauth';
  /**
   * The shop the request names (`market`), read in the credential's own statement of this request (never kept
   * beyond it): null when the account has no live shop of that code. The runner uses it instead of a second lookup.
   */
  requestShop?: { code: string; shop: ShopRef | null };
}

export interface CapabilityContext {
  db: Db;
  caller: Caller;
  requestId: string;
  now: () => Date;
  /** The shop named by `market`, checked against the caller's shop scope (set when the capability takes `market`). */
  shop: ShopRef | null;
  /** Signs and verifies pagination cursors. */
  cursorSecret: string;
  /** The shop platforms' adapters (write capabilities write through them). */
  platforms?: PlatformRegistry;
  /** Temporal (write capabilities that start workflows). */
  temporal?: TemporalAccess;
}
