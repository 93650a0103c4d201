/** Configuration is validated at start-up with a clear message naming every bad variable. */
import test from 'ava';
import { ConfigError, loadConfig } from '../../src/config/index.js';

test('When the environment is empty, then every setting has its documented default', (t) => {
  const config = loadConfig({});
  t.is(config.PORT, 3000);
  t.is(config.TEMPORAL_UI_PORT, 8233);
  t.is(config.DATABASE_URL, undefined);
  t.true(config.DATA_DIR.endsWith('data'));
});

test('When values are bad, then loading fails with a ConfigError naming each variable and value', (t) => {
  const error = t.throws(() => loadConfig({ PORT: 'eighty', DATABASE_URL: 'not a url', LOG_LEVEL: 'loud' }), { instanceOf: ConfigError });
  t.regex(error!.message, /PORT: .*"eighty"/);
  t.regex(error!.message, /DATABASE_URL/);
  t.regex(error!.message, /LOG_LEVEL/);
});

test('When NODE_ENV is production without CURSOR_SECRET, SECRETS_KEY or PUBLIC_BASE_URL, or with a development-only webhook setting, then start-up is refused', (t) => {
  const secrets = { CURSOR_SECRET: 'x'.repeat(32), SECRETS_KEY: 'ab'.repeat(32), PUBLIC_BASE_URL: 'https://data.example.com' };
  t.throws(() => loadConfig({ NODE_ENV: 'production' }), { instanceOf: ConfigError, message: /CURSOR_SECRET[\s\S]*SECRETS_KEY/ });
  t.throws(() => loadConfig({ NODE_ENV: 'production', CURSOR_SECRET: secrets.CURSOR_SECRET }), { instanceOf: ConfigError, message: /SECRETS_KEY/ });
  t.throws(() => loadConfig({ NODE_ENV: 'production', CURSOR_SECRET: secrets.CURSOR_SECRET, SECRETS_KEY: secrets.SECRETS_KEY }), { instanceOf: ConfigError, message: /PUBLIC_BASE_URL: required/ });
  t.notThrows(() => loadConfig({ NODE_ENV: 'production', ...secrets }));
  t.throws(() => loadConfig({ NODE_ENV: 'production', ...secrets, WEBHOOK_ALLOW_LOOPBACK: 'true' }), { instanceOf: ConfigError, message: /WEBHOOK_ALLOW_LOOPBACK/ });
  t.throws(() => loadConfig({ NODE_ENV: 'production', ...secrets, WEBHOOK_RETRY_SCHEDULE: '1s,2s' }), { instanceOf: ConfigError, message: /WEBHOOK_RETRY_SCHEDULE/ });
});

test('When the webhook settings are given, then SECRETS_KEY must be 32 bytes and WEBHOOK_RETRY_SCHEDULE a list of durations', (t) => {
  t.deepEqual(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1s,2s,500ms' }).WEBHOOK_RETRY_SCHEDULE, [1000, 2000, 500]);
  t.is(loadConfig({}).WEBHOOK_RETRY_SCHEDULE, undefined);
  t.throws(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: 'soon' }), { instanceOf: ConfigError, message: /WEBHOOK_RETRY_SCHEDULE/ });
  t.throws(() => loadConfig({ SECRETS_KEY: 'short' }), { instanceOf: ConfigError, message: /SECRETS_KEY/ });
  t.notThrows(() => loadConfig({ SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') }));
  t.is(loadConfig({ WEBHOOK_ALLOW_LOOPBACK: 'true' }).WEBHOOK_ALLOW_LOOPBACK, true);
});

test('When WEBHOOK_PARTITIONS is unset, then the dispatcher has 8 partitions; 1 to 256 are taken, anything else refused at start-up (WS1)', (t) => {
  t.is(loadConfig({}).WEBHOOK_PARTITIONS, 8);
  t.is(loadConfig({ WEBHOOK_PARTITIONS: '1' }).WEBHOOK_PARTITIONS, 1);
  t.is(loadConfig({ WEBHOOK_PARTITIONS: '256' }).WEBHOOK_PARTITIONS, 256);
  for (const bad of ['0', '257', '2.5', 'eight', '-1']) {
    t.throws(() => loadConfig({ WEBHOOK_PARTITIONS: bad }), { instanceOf: ConfigError, message: /WEBHOOK_PARTITIONS/ }, bad);
  }
});

test('When TRUST_PROXY is unset, then no proxy is trusted; a hop count or addresses are taken, anything else refused (S2)', (t) => {
  t.is(loadConfig({}).TRUST_PROXY, false);
  t.is(loadConfig({ TRUST_PROXY: 'false' }).TRUST_PROXY, false);
  t.is(loadConfig({ TRUST_PROXY: '1' }).TRUST_PROXY, 1);
  t.is(loadConfig({ TRUST_PROXY: '10' }).TRUST_PROXY, 10);
  t.deepEqual(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,192.0.2.7,fd00::/8' }).TRUST_PROXY, ['loopback', '10.0.0.0/8', '192.0.2.7', 'fd00::/8']);
  for (const bad of ['true', '0', '11', 'yes', '10.0.0.0/33', 'proxy.example.com', '1.2.3']) {
    t.throws(() => loadConfig({ TRUST_PROXY: bad }), { instanceOf: ConfigError, message: /TRUST_PROXY/ }, bad);
  }
});
