import { Context } from '@temporalio/activity';

/** How often `heartbeating` beats; the workflows that use it give up on a silent attempt after 10 s. */
const HEARTBEAT_EVERY_MS = 2_000;

/**
 * Runs `work` while heartbeating on a timer, also while it waits for a row lock or a shop: a worker that dies mid-run
 * is noticed after the workflow's heartbeat time-out (10 s), not after the activity's start-to-close, and the attempt
 * goes on on another worker.
 */
export async function heartbeating<T>(work: () => Promise<T>): Promise<T> {
  const context = Context.current();
  const timer = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
