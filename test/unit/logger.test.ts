/** Log lines carry the request id of the request they were written in, and never a credential. */
import { Writable } from 'node:stream';
import test from 'ava';
import { pino } from 'pino';
import { withLogContext, logMixin, logRedaction } from '../../src/logger.js';

test('When a line is logged inside a request context, then it carries the request id, and an Authorization header is redacted', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
  const log = pino({ mixin: logMixin, redact: logRedaction }, sink);
  withLogContext({ requestId: 'req_abc' }, () => {
    setTimeout(() => log.info({ req: { headers: { authorization: 'Bearer sk_secret' } } }, 'inside'), 1);
  });
  log.info('outside');
  await new Promise((r) => setTimeout(r, 20));
  const inside = JSON.parse(lines.find((l) => l.includes('inside'))!);
  const outside = JSON.parse(lines.find((l) => l.includes('outside'))!);
  t.is(inside.requestId, 'req_abc');
  t.is(outside.requestId, undefined);
  t.false(lines.join('').includes('sk_secret'));
});
