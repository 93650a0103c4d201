/** The set-up every e2e file of the application shares: a database copy, the application's server, the run's browser. */
import anyTest, { type TestFn } from 'ava';
import { startApplicationServer, testApplicationOptions } from './application.js';
import { connectBrowser, freshPagePerTest, type PageTestContext } from './browser.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import type { TestServer } from './server.js';

export interface ApplicationPageContext extends PageTestContext {
  database: TestDatabase;
  server: TestServer;
}

/**
 * The file's `test`: before its tests a copy of the demo database, the application's server over it and a connection
 * to the run's browser (`prepare` adds its own facts to the context), a fresh browser context and page per test, and
 * everything closed after the file.
 */
export function applicationPageTest<Extra extends object = object>(prepare?: (database: TestDatabase) => Promise<Extra>): TestFn<ApplicationPageContext & Extra> {
  const test = anyTest as TestFn<ApplicationPageContext & Extra>;
  test.before(async (t) => {
    const database = await createTestDatabase();
    Object.assign(t.context, { database });
    Object.assign(t.context, {
      server: await startApplicationServer(database.db, testApplicationOptions()), browser: await connectBrowser(), ...(prepare ? await prepare(database) : {}),
    });
  });
  test.after.always(async (t) => {
    await t.context.browser?.close();
    await t.context.server?.close();
    await t.context.database?.drop();
  });
  freshPagePerTest(test);
  return test;
}
