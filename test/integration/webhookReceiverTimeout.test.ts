/**
 * SPEC: a receiver must answer 2xx within 10 seconds. The production setting (the configuration as a worker reads it)
 * against a real receiver on both sides of the bound, in real time: an answer after 9 s is a success, one after 11 s
 * is a time-out cut at 10 s (the attempt does not wait for the late answer).
 */
import crypto from 'node:crypto';
import test from 'ava';
import { loadConfig } from '../../src/config/index.js';
import { closeWebhookAgents, postWebhook } from '../../src/webhooks/http.js';
import { webhookSettings } from '../../src/webhooks/settings.js';
import { startReceiver } from '../helpers/receiver.js';

test.after.always(async () => {
  await closeWebhookAgents();
});

test('When a receiver answers after 9 s the attempt succeeds; after 11 s it is a time-out at 10 s', async (t) => {
  t.timeout(60_000);
  const settings = webhookSettings(loadConfig({}), { secretsKey: crypto.randomBytes(32), previousSecretsKey: null, cursorSecret: 'x'.repeat(32) });
  const receiver = await startReceiver({ reply: (req) => ({ status: 200, delayMs: req.headers['x-delay'] === 'late' ? 11_000 : 9_000 }) });
  try {
    const url = new URL(receiver.url);
    const attempt = (delay: 'in-time' | 'late') => postWebhook({
      url, hostname: url.hostname, addresses: [{ address: '127.0.0.1', family: 4 }],
      headers: { 'Content-Type': 'application/json', 'X-Delay': delay }, body: '{}', timeoutMs: settings.timeoutMs,
    });
    const [inTime, late] = await Promise.all([attempt('in-time'), attempt('late')]);
    t.is(inTime.outcome, 'success', JSON.stringify(inTime));
    t.true(inTime.durationMs >= 9_000, `answered after ${inTime.durationMs} ms`);
    t.is(late.outcome, 'timeout', JSON.stringify(late));
    t.true(late.durationMs >= 10_000, `cut after ${late.durationMs} ms, not before 10 s`);
    t.regex(late.error ?? '', /no answer within 10 s/);
  } finally {
    await receiver.close();
  }
});
