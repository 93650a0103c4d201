/**
 * How the HTTP edge reaches Temporal (proposal workflows, manual automation runs). The composition root builds the one
 * instance, lazily connected (src/entry/compose.ts `lazyTemporalAccess`).
 */
import type { Client } from '@temporalio/client';

export interface TemporalAccess {
  /** The client; throws when Temporal cannot be reached (callers turn that into a clear error). */
  client(): Promise<Client>;
  close(): Promise<void>;
  /** The task queue workflows started through this access run on (default TASK_QUEUE; tests use their own). */
  taskQueue?: string;
}
