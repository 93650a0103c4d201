/** Free-port lookup and TCP probing for local servers and tests. */
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

/** Lowest port tried; below it sit the well-known and registered ports of services a machine commonly runs. */
const LOWEST_PORT = 15_000;

/**
 * The first port the kernel hands out for outgoing connections (Linux: ip_local_port_range), or null when unknown.
 * A port from that range can be taken by any outgoing connection between our check and a child process's bind.
 */
function ephemeralRangeStart(): number | null {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST_PORT + 1000 ? low : null;
  } catch {
    return null;
  }
}

/** Binds 127.0.0.1:port (0 = the OS picks) and releases it; the port, or null when it is taken. */
function tryPort(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(bound || null));
    });
  });
}

/**
 * A port that was free a moment ago on 127.0.0.1. It is often handed to another process (Postgres, Temporal, a
 * server under test) that binds it seconds later, so on Linux it is drawn at random from below the ephemeral range:
 * there no outgoing connection can take it in the meantime, and parallel callers rarely draw the same one.
 */
export async function findFreePort(): Promise<number> {
  const ephemeralStart = ephemeralRangeStart();
  if (ephemeralStart !== null) {
    for (let tries = 0; tries < 50; tries++) {
      const candidate = LOWEST_PORT + Math.floor(Math.random() * (ephemeralStart - LOWEST_PORT));
      const port = await tryPort(candidate);
      if (port !== null) return port;
    }
  }
  const port = await tryPort(0);
  if (port === null) throw new Error('Could not determine a free port');
  return port;
}

/** True when something accepts TCP connections on host:port. */
export function canConnect(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
