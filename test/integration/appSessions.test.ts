/**
 * How long a session of the application lives, on both sides of each limit: it ends
 * after 2 hours without a request and 12 hours after sign-in whatever the activity (src/people/sessions.ts).
 */
import anyTest, { type TestFn } from 'ava';
import { createSession, findSession } from '../../src/people/sessions.js';
import { createEmptyTestDatabase, type TestDatabase } from '../helpers/db.js';

interface Context { database: TestDatabase }
const test = anyTest as TestFn<Context>;
const HOUR = 3_600_000;
const SIGNED_IN = new Date('2026-11-27T08:00:00Z');
const at = (ms: number) => new Date(SIGNED_IN.getTime() + ms);

test.before(async (t) => {
  t.context = { database: await createEmptyTestDatabase() };
});
test.after.always(async (t) => {
  await t.context.database?.drop();
});

// The partner portal's sessions go through the same two functions (another table), so one store is enough here.
const store = 'app_sessions';
test('When a session sees no request for just under 2 hours, then it lives; at 2 hours it has ended', async (t) => {
  const { db } = t.context.database;
  const who = {};
  const quiet = await createSession(db, SIGNED_IN, who, store);
  t.not(await findSession(db, quiet.token, at(2 * HOUR - 1_000), store), null, 'one second before 2 hours');
  const idle = await createSession(db, SIGNED_IN, who, store);
  t.is(await findSession(db, idle.token, at(2 * HOUR), store), null, 'at 2 hours');
});

test('When a session is used every hour, then it lives until just under 12 hours after sign-in and not at 12 hours', async (t) => {
  const { db } = t.context.database;
  const who = {};
  const busy = await createSession(db, SIGNED_IN, who, store);
  for (let hour = 1; hour < 12; hour += 1) t.not(await findSession(db, busy.token, at(hour * HOUR), store), null, `hour ${hour}`);
  t.not(await findSession(db, busy.token, at(12 * HOUR - 1_000), store), null, 'one second before 12 hours');
  t.is(await findSession(db, busy.token, at(12 * HOUR), store), null, 'at 12 hours');
});
