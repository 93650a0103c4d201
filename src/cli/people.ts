/** `people create|list|set|disable`: the owner's administration of people until an admin page exists (D11, D27). */
import crypto from 'node:crypto';
import { parseArgs } from 'node:util';
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { createPerson, disablePerson, findPersonIdByEmail, listPeople, updatePerson, type PersonSummary } from '../people/people.js';
import { isRole, permissions, roles, type Role } from '../people/model.js';
import { findAccountByCode } from '../queries/shops.js';
import { print, UsageError } from './output.js';

export const peopleUsage = `  people create --email E --role owner|admin|member [--name N] [--permissions a,b|all] [--shops all|sk,cz] [--password P] [--account CODE]
         (without --password a strong password is generated and shown once; PERSON_PASSWORD is read too)
  people list [--account CODE]
  people set ID|EMAIL [--role R] [--permissions a,b|all|none] [--shops all|sk,cz] [--password P] [--unlock] [--account CODE]
  people disable ID|EMAIL [--account CODE]
`;

function permissionList(text: string): string[] {
  if (text === 'all') return [...permissions];
  if (text === 'none') return [];
  return text.split(',').map((s) => s.trim()).filter(Boolean);
}

function shopList(text: string): string[] | null {
  return text === 'all' ? null : text.split(',').map((s) => s.trim()).filter(Boolean);
}

function line(p: PersonSummary): string {
  const flags = [p.secondFactor ? '2FA' : null, p.locked ? 'LOCKED' : null, p.disabled ? 'DISABLED' : null].filter(Boolean).join(',');
  return `${p.id}  ${p.email}  ${p.role}  shops=${p.shops === 'all' ? 'all' : p.shops.join(',')}  permissions=${p.permissions.join(',') || '-'}${flags ? `  ${flags}` : ''}`;
}

export async function peopleCommand(db: Db, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      email: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' }, permissions: { type: 'string' }, shops: { type: 'string' },
      password: { type: 'string' }, unlock: { type: 'boolean', default: false }, account: { type: 'string', default: 'demo' }, json: { type: 'boolean', default: false },
    },
  });
  const account = await findAccountByCode(db, values.account!);
  if (!account) throw new UsageError(`No account \`${values.account}\`.`);
  const json = values.json!;
  const target = async () => {
    const ref = positionals[0];
    if (!ref) throw new UsageError(`people ${action} ID|EMAIL`);
    const id = ref.includes('@') ? await findPersonIdByEmail(db, account.id, ref) : ref;
    if (!id) throw new UsageError(`No person ${ref} in account ${account.code}.`);
    return id;
  };
  try {
    if (action === 'create') {
      if (!values.email) throw new UsageError('--email is required.');
      if (!values.role || !isRole(values.role)) throw new UsageError(`--role is required: ${roles.join(', ')}.`);
      const given = values.password ?? process.env.PERSON_PASSWORD;
      const password = given ?? crypto.randomBytes(15).toString('base64url');
      const created = await createPerson(db, {
        accountId: account.id, email: values.email, name: values.name, password, role: values.role as Role,
        permissions: permissionList(values.permissions ?? (values.role === 'owner' ? 'all' : 'none')), shops: shopList(values.shops ?? 'all'),
      });
      const shown = given ? '' : `\nIts generated password is shown only now:\n\n  ${password}\n`;
      print(json, { id: created.id, email: values.email.trim().toLowerCase(), ...(given ? {} : { password }) }, `Created ${created.id} (${values.email}).${shown}\nSign in at /app/sign-in.`);
      return;
    }
    if (action === 'list') {
      const people = await listPeople(db, account.id);
      print(json, { people }, people.length ? people.map(line).join('\n') : '(no people)');
      return;
    }
    if (action === 'set') {
      const id = await target();
      if (values.role !== undefined && !isRole(values.role)) throw new UsageError(`--role must be one of ${roles.join(', ')}.`);
      const person = await updatePerson(db, account.id, id, {
        name: values.name, role: values.role as Role | undefined, permissions: values.permissions === undefined ? undefined : permissionList(values.permissions),
        shops: values.shops === undefined ? undefined : shopList(values.shops), password: values.password, unlock: values.unlock,
      });
      print(json, { person }, line(person));
      return;
    }
    if (action === 'disable') {
      const person = await disablePerson(db, account.id, await target());
      print(json, { person }, `Disabled ${person.id}: sessions ended, connections revoked.`);
      return;
    }
  } catch (error) {
    if (error instanceof AppError) throw new UsageError(`${error.code}: ${error.message}`);
    throw error;
  }
  throw new UsageError(`people create|list|set|disable\n\n${peopleUsage}`);
}
