/** A test worker (one of test/helpers/*WorkerProcess.ts) as a real child process that a test can kill (one copy). */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../src/config/projectRoot.js';

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
