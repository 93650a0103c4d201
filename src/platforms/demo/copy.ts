/** Postgres COPY helpers for bulk loads: text-format encoding, chunked row buffers and id reservation. */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import copyStreams from 'pg-copy-streams';

/** A raw pg connection (from the knex pool or a dedicated client). */
export type PgConnection = pg.ClientBase;

type CopyValue = string | number | boolean | Date | null | undefined;

const NEEDS_ESCAPE = /[\\\t\n\r]/;

/** Encodes one value for COPY's text format (\N is null; backslash, tab and line breaks are escaped). */
export function copyValue(v: CopyValue): string {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'string') return NEEDS_ESCAPE.test(v) ? v.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r') : v;
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (v instanceof Date) return v.toISOString();
  return String(v);
}

/** Collects COPY rows into ~256 kB chunks so a large batch streams without one giant string. */
export class CopyBuffer {
  readonly chunks: string[] = [];
  private lines: string[] = [];
  private size = 0;
  rows = 0;

  constructor(readonly table: string, readonly columns: readonly string[]) {}

  /** Adds one row; values are in the order of `columns`. */
  add(values: CopyValue[]): void {
    // join() yields a flat string; += would build a rope per row that costs far more heap until flattened.
    const encoded = new Array<string>(values.length);
    for (let i = 0; i < values.length; i++) encoded[i] = copyValue(values[i]);
    const line = encoded.join('\t');
    this.lines.push(line);
    this.size += line.length + 1;
    this.rows++;
    if (this.size >= 256_000) this.flush();
  }

  private flush(): void {
    if (this.lines.length) this.chunks.push(`${this.lines.join('\n')}\n`);
    this.lines = [];
    this.size = 0;
  }

  /** Streams the buffered rows into the table with COPY FROM STDIN; a no-op when empty. */
  async copyInto(conn: PgConnection): Promise<number> {
    this.flush();
    if (!this.rows) return 0;
    const sql = `copy ${this.table} (${this.columns.join(', ')}) from stdin`;
    const stream = conn.query(copyStreams.from(sql));
    await pipeline(Readable.from(this.chunks), stream);
    return this.rows;
  }
}

/**
 * Ids reserved from a table's bigserial sequence, so parents and children can be written by COPY in one pass.
 * nextval is used (not setval arithmetic) so concurrent writers to the same table can never receive the same ids.
 */
export class IdReservation {
  private ranges: Array<[number, number]> = [];
  private available = 0;
  private sequence: string | null = null;

  constructor(private readonly conn: PgConnection, private readonly table: string, private readonly chunk: number) {}

  /** Makes sure at least `n` ids are reserved (one round trip per chunk). */
  async ensure(n: number): Promise<void> {
    if (this.available >= n) return;
    if (!this.sequence) {
      const r = await this.conn.query<{ seq: string }>('select pg_get_serial_sequence($1, $2) as seq', [this.table, 'id']);
      this.sequence = r.rows[0].seq;
    }
    const want = Math.max(this.chunk, n - this.available);
    const r = await this.conn.query<{ ids: string }>(
      'select string_agg(nextval($1::regclass)::text, \',\') as ids from generate_series(1, $2)', [this.sequence, want],
    );
    // Compress into ranges: normally one contiguous run per call.
    for (const id of r.rows[0].ids.split(',').map(Number)) {
      const last = this.ranges[this.ranges.length - 1];
      if (last && last[1] === id - 1) last[1] = id;
      else this.ranges.push([id, id]);
    }
    this.available += want;
  }

  /** Takes the next reserved id; `ensure` must have been awaited for enough ids. */
  next(): number {
    const first = this.ranges[0];
    if (!first) throw new Error(`No reserved ${this.table} ids left`);
    const id = first[0];
    if (first[0] === first[1]) this.ranges.shift();
    else first[0]++;
    this.available--;
    return id;
  }
}
