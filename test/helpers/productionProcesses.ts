/**
 * The production entry points as separate processes (dist/src/entry/server.js and worker.js), and a small round-robin
 * proxy in front of the API processes: what docker-compose runs, without Docker.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { projectRoot } from '../../src/config/projectRoot.js';

export interface EntryProcess {
  child: ChildProcess;
  /** Every stdout and stderr line so far (JSON log lines and anything else). */
  lines: string[];
  /** Resolves with the first line matching `pattern`; rejects when the process exits first or after `timeoutMs`. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
}

/** Starts `node dist/src/entry/<entry>.js` with exactly `env` added to PATH/HOME. */
export function startEntry(entry: 'server' | 'worker', env: Record<string, string>): EntryProcess {
  const child = spawn(process.execPath, [path.join(projectRoot, 'dist', 'src', 'entry', `${entry}.js`)], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.pattern.test(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    waitForLine(pattern, timeoutMs = 120_000) {
      const seen = lines.find((line) => pattern.test(line));
      if (seen) return Promise.resolve(seen);
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${entry}: no line matching ${pattern} within ${timeoutMs} ms; last lines:\n${lines.slice(-15).join('\n')}`)), timeoutMs);
        waiters.push({ pattern, resolve: (line) => { clearTimeout(timer); resolve(line); } });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`${entry} exited (${code}) before ${pattern}; last lines:\n${lines.slice(-15).join('\n')}`));
        });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface RoundRobinProxy {
  baseUrl: string;
  port: number;
  /** The upstream ports, in turn; set after the API processes got their ports. */
  upstreams: number[];
  /** How many requests each upstream answered. */
  served: Map<number, number>;
  close(): Promise<void>;
}

/** A plain HTTP proxy that sends each request to the next upstream in turn (no stickiness: any process answers any request). */
export async function startRoundRobinProxy(): Promise<RoundRobinProxy> {
  let next = 0;
  const proxy: RoundRobinProxy = { baseUrl: '', port: 0, upstreams: [], served: new Map(), close: async () => {} };
  const server = http.createServer((req, res) => {
    const upstream = proxy.upstreams[next++ % proxy.upstreams.length];
    if (upstream === undefined) {
      res.writeHead(502).end('no upstream');
      return;
    }
    proxy.served.set(upstream, (proxy.served.get(upstream) ?? 0) + 1);
    const forward = http.request({ host: '127.0.0.1', port: upstream, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as AddressInfo).port;
  proxy.baseUrl = `http://127.0.0.1:${proxy.port}`;
  proxy.close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return proxy;
}
