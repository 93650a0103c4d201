/**
 * A signed-in person as a read-only capability caller: the application's data screens (customers, documents) run the
 * same capabilities as REST and MCP, so a screen, its export and the API give exactly the same projection. The
 * person's scopes are what they could grant (D27: permissions decide personal data, reports, purchase prices),
 * read scopes only; their shops are their shops.
 */
import type { Scope } from '../auth/scopes.js';
import type { Caller } from '../capabilities/context.js';
import type { Person } from './model.js';
import { grantableScopes } from './rights.js';

export function personAsCaller(person: Person): Caller {
  const scopes = new Set<Scope>(grantableScopes(person).filter((s) => s.endsWith(':read')));
  return {
    account: { id: person.accountId, code: person.accountCode, timeZone: person.accountTimeZone },
    scopes, shopCodes: person.shopCodes, credentialId: `person:${person.id}`, interface: 'rest', writeMode: 'read_only',
  };
}
