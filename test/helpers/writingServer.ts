/** The set-up of files that write to shops over the API: the demo database, its platforms on the test clock, a key. */
import anyTest, { type TestFn } from 'ava';
import { createPlatformRegistry, type PlatformRegistry } from '../../src/platforms/registry.js';
import { TEST_NOW } from './constants.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { issueKey, startTestServer, type TestServer } from './server.js';

export interface WritingServerContext {
  database: TestDatabase;
  platforms: PlatformRegistry;
  server: TestServer;
  key: string;
}

/** The file's `test`: a copy of the demo database, the server with the platforms (wall clock TEST_NOW) and a key with every scope. */
export function writingServerTest(): TestFn<WritingServerContext> {
  const test = anyTest as TestFn<WritingServerContext>;
  test.before(async (t) => {
    const database = await createTestDatabase();
    const wall = () => TEST_NOW;
    const platforms = createPlatformRegistry({ db: database.db, wallClock: wall });
    const server = await startTestServer(database.db, wall, undefined, { platforms });
    t.context = { database, platforms, server, key: await issueKey(database.db) };
  });
  test.after.always(async (t) => {
    await t.context.server?.close();
    await t.context.database?.drop();
  });
  return test;
}
