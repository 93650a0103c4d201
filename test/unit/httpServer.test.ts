/** The HTTP server's own timing (P42): idle keep-alive sockets outlive a client's and a proxy's idle limit. */
import test from 'ava';
import { createHttpServer } from '../../api/http/server.js';

test('When the server is created, then idle keep-alive sockets live 65 s, above undici\'s 4 s and a proxy\'s 60 s, and headers may take 66 s (P42)', (t) => {
  const server = createHttpServer(() => undefined);
  t.is(server.keepAliveTimeout, 65_000);
  // Node requires headersTimeout above keepAliveTimeout, or a reused socket can be cut while its headers arrive.
  t.is(server.headersTimeout, 66_000);
  t.true(server.keepAliveTimeout > 60_000);
});
