/** A test worker (one of test/helpers/*WorkerProcess.ts) as a real child process that a test can kill (one copy). */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { TestFn } from 'ava';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { projectRoot } from '../../src/config/projectRoot.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { startTimeSkippingServer } from './timeSkipping.js';

export interface WorkerProcess {
  child: ChildProcess;
  /** Resolves when the process printed `word` (each of `words` given at start), rejects if it exits first. */
  printed: Record<string, Promise<void>>;
}

/**
 * Spawns `dist/test/helpers/<script>.js` with `env` added; `words` are the lines it prints that the test waits for
 * (listened to from the start, so none is missed). `children` collects the process for the file's clean-up.
 */
export function spawnWorkerProcess(script: string, env: Record<string, string>, words: string[] = ['ready'], children?: ChildProcess[]): WorkerProcess {
  const child = spawn(process.execPath, [path.join(projectRoot, 'dist', 'test', 'helpers', `${script}.js`)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children?.push(child);
  const printed: Record<string, Promise<void>> = {};
  for (const word of words) {
    printed[word] = new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => { if (chunk.toString().includes(word)) resolve(); });
      child.once('exit', (code) => reject(new Error(`worker process ${script} exited (${code}) before printing ${word}`)));
    });
    // A word the test never awaits must not become an unhandled rejection when the process is killed.
    printed[word].catch(() => undefined);
  }
  return { child, printed };
}

/** Spawns the worker and resolves with its process once it printed `ready`. */
export async function startWorkerProcess(script: string, env: Record<string, string>, children?: ChildProcess[]): Promise<ChildProcess> {
  const worker = spawnWorkerProcess(script, env, ['ready'], children);
  await worker.printed.ready;
  return worker.child;
}

/** What a crash test file holds: its database, the time-skipping server and the worker processes it may kill. */
export interface CrashTestContext { database: TestDatabase; env: TestWorkflowEnvironment; children: ChildProcess[] }

/**
 * The set-up of a crash test file: a database and a time-skipping Temporal server before, and after, every worker
 * process still alive killed before the server goes (a live worker would keep polling a server that is gone).
 */
export function crashTestFile<C extends CrashTestContext>(test: TestFn<C>): void {
  test.before(async (t) => {
    Object.assign(t.context, { database: await createTestDatabase(), env: await startTimeSkippingServer(), children: [] });
  });
  test.after.always(async (t) => {
    for (const child of t.context.children ?? []) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await t.context.env?.teardown();
    await t.context.database?.drop();
  });
}
