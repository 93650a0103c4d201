/**
 * Standard Webhooks (issue 27 point 4): the service's signed requests verify with the official `standardwebhooks`
 * libraries — npm and PyPI (installed under .tools by `bootstrap --test-tools`) — given the `whsec_…` secret as shown,
 * and the receiver guide of docs/webhooks.md works as printed; altered bodies, other secrets and stale timestamps are
 * refused by both.
 */
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { projectRoot } from '../../src/config/projectRoot.js';
import { findFreePort } from '../../src/infra/ports.js';
import { generateEndpointSecret } from '../../src/webhooks/secrets.js';
import { deliveryRequestHeaders } from '../../src/webhooks/signature.js';

const guide = fs.readFileSync(path.join(projectRoot, 'docs', 'webhooks.md'), 'utf8');
const toolVersions = JSON.parse(fs.readFileSync(path.join(projectRoot, 'scripts', 'tool-versions.json'), 'utf8'));
const pythonPath = path.join(projectRoot, toolVersions.standardWebhooksPython.dir);

function codeAfter(heading: string, language: string): string {
  const start = guide.indexOf(`\`\`\`${language}\n`, guide.indexOf(heading));
  return guide.slice(start + language.length + 4, guide.indexOf('```', start + 3));
}

function signed(secret: string, at = Math.floor(Date.now() / 1000), eventId: string = crypto.randomUUID()) {
  const body = JSON.stringify({ event_id: eventId, event_type: 'ping', version: 1, data: { message: 'žluťoučký kůň' } });
  return { body, headers: deliveryRequestHeaders({ eventType: 'ping', eventId, deliveryId: '7', secret, body, timestamp: at }) };
}

test('When a request is signed, then npm standardwebhooks verifies it with the whsec_ secret as shown, and refuses an altered body, another secret and a stale or future timestamp', (t) => {
  const secret = generateEndpointSecret();
  const req = signed(secret);
  t.is(req.headers['webhook-id'], JSON.parse(req.body).event_id, 'webhook-id is the event_id');
  t.is(req.headers['webhook-timestamp'], req.headers['X-Service-Timestamp']);
  t.regex(req.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/);
  t.deepEqual(new Webhook(secret).verify(req.body, req.headers), JSON.parse(req.body));
  t.throws(() => new Webhook(secret).verify(req.body.replace('kůň', 'kun'), req.headers), { message: /No matching signature/ });
  t.throws(() => new Webhook(generateEndpointSecret()).verify(req.body, req.headers), { message: /No matching signature/ });
  const stale = signed(secret, Math.floor(Date.now() / 1000) - 301);
  t.throws(() => new Webhook(secret).verify(stale.body, stale.headers), { message: /too old/ });
  const future = signed(secret, Math.floor(Date.now() / 1000) + 301);
  t.throws(() => new Webhook(secret).verify(future.body, future.headers), { message: /too new/ });
});

test('When the guide\'s Python receiver (PyPI standardwebhooks) gets signed requests, then it answers 200 to a real one and 400 to forged or stale ones', (t) => {
  const python = ['python3', 'python'].find((p) => spawnSync(p, ['--version']).status === 0);
  if (!python) return t.fail('Python 3 is needed (the bootstrap needs it too)');
  t.true(fs.existsSync(path.join(pythonPath, 'standardwebhooks')), `PyPI standardwebhooks is installed under ${toolVersions.standardWebhooksPython.dir} (npm test's bootstrap --test-tools)`);
  const secret = generateEndpointSecret();
  const harness = `${codeAfter('Python (`pip install standardwebhooks`', 'python')}
import sys, json
for line in sys.stdin:
    req = json.loads(line)
    print(handle(req["body"].encode(), req["headers"]))
`;
  const good = signed(secret);
  const requests = [good, good, { ...good, body: good.body.replace('kůň', 'kun') }, signed(secret, Math.floor(Date.now() / 1000) - 400), signed(generateEndpointSecret())];
  const result = spawnSync(python, ['-c', harness], {
    input: requests.map((r) => JSON.stringify(r)).join('\n') + '\n', env: { ...process.env, WEBHOOK_SECRET: secret, PYTHONPATH: pythonPath }, encoding: 'utf8',
  });
  t.is(result.status, 0, result.stderr);
  t.deepEqual(result.stdout.trim().split('\n'), ['200', '200', '400', '400', '400']);
});

test('When the guide\'s Node receiver (npm standardwebhooks) gets signed requests, then it answers 200 to a real one and 400 to forged, stale or unsigned ones', async (t) => {
  const secret = generateEndpointSecret();
  const port = await findFreePort();
  const file = path.join(projectRoot, 'dist', `standard-webhooks-guide-${process.pid}.mjs`); // beside node_modules
  fs.writeFileSync(file, codeAfter('Node.js (`npm install standardwebhooks', 'js').replace('.listen(8080);', `.listen(${port}, () => console.log('ready'));`));
  const child = spawn(process.execPath, [file], { env: { ...process.env, WEBHOOK_SECRET: secret }, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise<void>((resolve) => child.stdout!.on('data', (c: Buffer) => c.toString().includes('ready') && resolve()));
    const post = async (req: { body: string; headers: Record<string, string> }) => (await fetch(`http://127.0.0.1:${port}/hooks`, { method: 'POST', body: req.body, headers: req.headers })).status;
    const good = signed(secret);
    t.is(await post(good), 200);
    t.is(await post(good), 200, 'a redelivery is acknowledged (and ignored)');
    t.is(await post({ ...good, body: good.body.replace('kůň', 'kun') }), 400, 'altered body');
    t.is(await post(signed(generateEndpointSecret())), 400, 'other secret');
    t.is(await post(signed(secret, Math.floor(Date.now() / 1000) - 301)), 400, 'stale timestamp');
    t.is(await post({ ...good, headers: { ...good.headers, 'webhook-signature': '' } }), 400, 'no signature');
  } finally {
    child.kill();
    fs.rmSync(file, { force: true });
  }
});
