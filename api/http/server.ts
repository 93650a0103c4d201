/** The HTTP server of the application: also answers requests Node's parser rejects with a D3 error body. */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { RequestListener } from 'node:http';
import { AppError, type ErrorCode } from '../../src/errors.js';
import { logger } from '../../src/logger.js';
import { newRequestId } from './requestContext.js';

/** Node's parser errors → our codes; everything else it rejects is a malformed request. */
function parserErrorCode(code: string | undefined): ErrorCode {
  if (code === 'HPE_HEADER_OVERFLOW') return 'REQUEST_HEADERS_TOO_LARGE';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'REQUEST_TIMEOUT';
  return 'MALFORMED_REQUEST';
}

const MESSAGES: Partial<Record<ErrorCode, string>> = {
  REQUEST_HEADERS_TOO_LARGE: 'The request line and headers are larger than 16 KB; send long values (cursors, searches) shorter.',
  REQUEST_TIMEOUT: 'The request was not received completely in time.',
  MALFORMED_REQUEST: 'The HTTP request could not be parsed.',
};

/** Creates the server for `app`. Without this, Node answers a too-long URL with an empty 431 and no code. */
export function createHttpServer(app: RequestListener): http.Server {
  const server = http.createServer(app);
  // Idle keep-alive connections outlive the clients' own idle timers (and a load balancer's usual 60 s): with Node's 5 s
  // default a client could reuse a connection at the instant the server closed it, a "fetch failed" under load.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // Nothing to answer on a connection the client already dropped.
    if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    const code = parserErrorCode(err.code);
    const error = new AppError(code, MESSAGES[code] ?? 'Bad request.');
    const requestId = newRequestId();
    logger.info({ requestId, code, parserError: err.code }, 'request rejected by the HTTP parser');
    const body = JSON.stringify({ error: error.toJSON(), meta: { requestId } });
    socket.end([
      `HTTP/1.1 ${error.status} ${http.STATUS_CODES[error.status]}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `Request-Id: ${requestId}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'));
  });
  return server;
}
