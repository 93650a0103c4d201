/**
 * Named prepared statements for the hottest reads (the credential of every request, the orders page): Postgres
 * parses and plans such a statement once per connection and afterwards only binds values, and no query builder
 * runs per request. Nothing is cached but the statement text: every call reads the current rows.
 */
import type pg from 'pg';
import type { Db } from './knex.js';

interface ConnectionSource {
  acquireConnection(): Promise<pg.Client>;
  releaseConnection(connection: pg.Client): Promise<void>;
}

/**
 * Runs `text` as the prepared statement `name` on a connection of `db` (a knex instance or transaction: a
 * transaction hands out its own connection). One name must always carry the same text.
 */
export async function preparedRows<Row>(db: Db, name: string, text: string, values: unknown[]): Promise<Row[]> {
  const source = db.client as unknown as ConnectionSource;
  const connection = await source.acquireConnection();
  try {
    return (await connection.query({ name, text, values })).rows as Row[];
  } finally {
    await source.releaseConnection(connection);
  }
}
