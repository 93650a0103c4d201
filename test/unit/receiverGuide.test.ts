/** The receiver guide (docs/webhooks.md) works as printed: its Node and Python code accept a real signed delivery and refuse forgeries. */
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { projectRoot } from '../../src/config/projectRoot.js';
import { generateEndpointSecret } from '../../src/webhooks/secrets.js';
import { deliveryRequestHeaders } from '../../src/webhooks/signature.js';
import { findFreePort } from '../../src/infra/ports.js';

const readme = fs.readFileSync(path.join(projectRoot, 'docs/webhooks.md'), 'utf8');

function codeAfter(heading: string, language: string): string {
  const start = readme.indexOf(`\`\`\`${language}\n`, readme.indexOf(heading));
  return readme.slice(start + language.length + 4, readme.indexOf('```', start + 3));
}

function signed(secret: string, at = Math.floor(Date.now() / 1000)) {
  const body = JSON.stringify({ event_id: crypto.randomUUID(), event_type: 'ping', version: 1, data: { message: 'héllo' } });
  return { body, headers: deliveryRequestHeaders({ eventType: 'ping', eventId: 'e', deliveryId: '1', secret, body, timestamp: at }) };
}

test('When the receiver guide\'s Node receiver gets a signed delivery, then it answers 200; a forged, stale or unsigned one gets 400', async (t) => {
  const secret = generateEndpointSecret();
  const port = await findFreePort();
  const file = path.join(projectRoot, 'dist', `receiver-guide-${process.pid}.mjs`); // beside node_modules, so `express` resolves
  fs.writeFileSync(file, codeAfter('Node.js (Express', 'js').replace('.listen(8080);', `.listen(${port}, () => console.log('ready'));`));
  const child = spawn(process.execPath, [file], { env: { ...process.env, WEBHOOK_SECRET: secret }, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise<void>((resolve) => child.stdout!.on('data', (c: Buffer) => c.toString().includes('ready') && resolve()));
    const post = async (req: { body: string; headers: Record<string, string> }) => (await fetch(`http://127.0.0.1:${port}/hooks`, { method: 'POST', body: req.body, headers: req.headers })).status;
    const good = signed(secret);
    t.is(await post(good), 200);
    t.is(await post(good), 200, 'a redelivery is acknowledged (and ignored)');
    t.is(await post({ ...good, body: good.body.replace('héllo', 'hello') }), 400, 'altered body');
    t.is(await post(signed('whsec_not-the-secret')), 400, 'other secret');
    t.is(await post(signed(secret, Math.floor(Date.now() / 1000) - 301)), 400, 'stale timestamp');
    t.is(await post({ ...good, headers: { ...good.headers, 'X-Service-Signature': '' } }), 400, 'no signature');
  } finally {
    child.kill();
    fs.rmSync(file, { force: true });
  }
});

test('When the receiver guide\'s Python receiver gets a signed delivery, then it answers 200; a forged or stale one gets 400', (t) => {
  const python = ['python3', 'python'].find((p) => spawnSync(p, ['--version']).status === 0);
  if (!python) return t.fail('Python 3 is needed (the bootstrap needs it too)');
  const secret = generateEndpointSecret();
  const harness = `${codeAfter('Python (standard library', 'python')}
import sys
for line in sys.stdin:
    req = json.loads(line)
    print(handle(req["body"].encode(), req["headers"]))
`;
  const requests = [signed(secret), { ...signed(secret), body: '{"event_id":"x"}' }, signed(secret, Math.floor(Date.now() / 1000) + 400), signed('whsec_other')];
  const result = spawnSync(python, ['-c', harness], { input: requests.map((r) => JSON.stringify(r)).join('\n') + '\n', env: { ...process.env, WEBHOOK_SECRET: secret }, encoding: 'utf8' });
  t.is(result.status, 0, result.stderr);
  t.deepEqual(result.stdout.trim().split('\n'), ['200', '400', '400', '400']);
});
