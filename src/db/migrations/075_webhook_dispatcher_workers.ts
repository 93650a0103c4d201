/**
 * The webhook dispatcher's scale-out (issue 27 point 2, WS2): the worker processes of each task queue announce
 * themselves here every second, so each knows how many share the dispatcher partitions (a fair share each).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_dispatcher_workers', (t) => {
    t.text('task_queue').notNullable();
    t.text('worker').notNullable();
    t.timestamp('seen_at', { useTz: true }).notNullable();
    t.primary(['task_queue', 'worker']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('webhook_dispatcher_workers');
}
