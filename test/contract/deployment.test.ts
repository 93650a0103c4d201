/** The production shape in docker-compose.yml and the Dockerfile keeps the promises of docs/operations.md. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { projectRoot } from '../../src/config/projectRoot.js';

type Service = { image?: string; ports?: string[]; environment?: Record<string, string>; healthcheck?: { test: string[] } };
const composeText = fs.readFileSync(path.join(projectRoot, 'docker-compose.yml'), 'utf8');
const compose = parse(composeText, { merge: true }) as { services: Record<string, Service> };
const dockerfile = fs.readFileSync(path.join(projectRoot, 'Dockerfile'), 'utf8');

test('When docker-compose.yml publishes ports, then only the proxy listens beyond the loopback address', (t) => {
  const published = Object.entries(compose.services).flatMap(([name, service]) => (service.ports ?? []).map((port) => ({ name, port: String(port) })));
  t.true(published.length >= 3, 'proxy, Temporal and its UI publish ports');
  for (const { name, port } of published) {
    if (name === 'proxy') continue;
    t.true(port.startsWith('127.0.0.1:'), `${name} publishes ${port} beyond loopback`);
  }
  t.deepEqual(compose.services.api!.ports, undefined, 'the API replicas are reached only through the proxy');
});

test('When Temporal runs in docker-compose, then it is the plain server image with its schema set up by admin-tools', (t) => {
  const images = Object.values(compose.services).map((service) => service.image ?? '');
  t.false(images.some((image) => image.includes('auto-setup')));
  t.regex(compose.services.temporal!.image!, /^temporalio\/server:/);
  t.regex(compose.services['temporal-schema']!.image!, /^temporalio\/admin-tools:/);
  const schemaScript = fs.readFileSync(path.join(projectRoot, 'deploy/temporal-schema.sh'), 'utf8');
  t.regex(schemaScript, /temporal_visibility/);
});

test('When the service runs in docker-compose, then production needs PUBLIC_BASE_URL, the API is health-checked on /readyz and the image is Node 22', (t) => {
  t.regex(composeText, /PUBLIC_BASE_URL: \$\{PUBLIC_BASE_URL:\?/);
  t.is(compose.services.api!.environment!.NODE_ENV, 'production');
  t.regex(compose.services.api!.healthcheck!.test.join(' '), /\/readyz/);
  const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
  t.deepEqual(bases.map((base) => base!.split(':')[1]!.split('-')[0]), ['22', '22']);
  t.regex(dockerfile, /nameData/, 'the image installs the first-name data set');
});

test('When docker-compose is installed, then `docker-compose config` validates the file with the required variables set', (t) => {
  const which = spawnSync('sh', ['-c', 'command -v docker-compose'], { encoding: 'utf8' });
  if (which.status !== 0) {
    // Debian's docker-compose is not on every machine; the structural checks above still run.
    t.log('docker-compose not installed: structural checks only');
    t.not(which.status, 0);
    return;
  }
  const env = { ...process.env, PUBLIC_BASE_URL: 'https://data.example.com', CURSOR_SECRET: 'x'.repeat(32), SECRETS_KEY: 'ab'.repeat(32) };
  const ok = spawnSync('docker-compose', ['config', '--quiet'], { cwd: projectRoot, env, encoding: 'utf8' });
  t.is(ok.status, 0, ok.stderr);
  const missing = spawnSync('docker-compose', ['config', '--quiet'], { cwd: projectRoot, env: { ...env, PUBLIC_BASE_URL: '' }, encoding: 'utf8' });
  t.not(missing.status, 0);
  t.regex(missing.stderr, /PUBLIC_BASE_URL/);
});
