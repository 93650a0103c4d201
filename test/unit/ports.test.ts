/**
 * Ports handed to another process (Postgres, Temporal, a server under test) bind seconds after they were found free, so
 * they must come from where no outgoing connection can take them meanwhile: below the kernel's ephemeral range (Q17).
 */
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { findFreePort } from '../../src/infra/ports.js';

const RANGE_FILE = '/proc/sys/net/ipv4/ip_local_port_range';

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

test('When free ports are found on Linux, then each lies from 15000 up to below the ephemeral range and can be bound', async (t) => {
  if (!existsSync(RANGE_FILE)) return t.log('no ip_local_port_range here: the fallback (port 0) is all there is');
  const ephemeralStart = Number(readFileSync(RANGE_FILE, 'utf8').trim().split(/\s+/)[0]);
  t.true(ephemeralStart > 16_000, `this machine's ephemeral range starts at ${ephemeralStart}`);
  const ports = await Promise.all(Array.from({ length: 20 }, () => findFreePort()));
  for (const port of ports) {
    t.true(port >= 15_000 && port < ephemeralStart, `${port} lies in [15000, ${ephemeralStart})`);
    t.true(await bindable(port), `${port} can be bound`);
  }
  // Drawn at random, not counted up from one place: parallel callers rarely meet.
  t.true(new Set(ports).size >= 15, `20 draws gave ${new Set(ports).size} different ports`);
});
