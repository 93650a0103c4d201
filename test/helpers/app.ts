/** One private database copy and one running server per test file, with a key of the given scopes. */
import anyTest, { type TestFn } from 'ava';
import { createTestDatabase, type TestDatabase } from './db.js';
import { issueKey, startTestServer, type KeyOptions, type TestServer } from './server.js';

export interface AppContext {
  database: TestDatabase;
  server: TestServer;
  /** A key with `keyOptions` (default: every scope, both interfaces, all shops of `demo`). */
  key: string;
}

/**
 * The file's ava `test`, with the database and server set up before and torn down after its tests. `prepare` adds
 * file-specific context in the same hook (ava runs separate `before` hooks concurrently).
 */
export function appTest<Extra extends object = object>(keyOptions: KeyOptions = {}, prepare?: (context: AppContext) => Promise<Extra>): TestFn<AppContext & Extra> {
  const test = anyTest as TestFn<AppContext & Extra>;
  test.before(async (t) => {
    const database = await createTestDatabase();
    const server = await startTestServer(database.db);
    const context: AppContext = { database, server, key: await issueKey(database.db, keyOptions) };
    Object.assign(t.context, context, prepare ? await prepare(context) : {});
  });
  test.after.always(async (t) => {
    await t.context.server?.close();
    await t.context.database?.drop();
  });
  return test;
}
