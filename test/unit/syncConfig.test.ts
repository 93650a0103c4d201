/** The live-sync settings: SYNC_INTERVAL and DEMO_CLOCK_SPEED are validated at start-up like every other variable. */
import test from 'ava';
import { ConfigError, loadConfig } from '../../src/config/index.js';

test('When SYNC_INTERVAL and DEMO_CLOCK_SPEED are unset, then shops sync every minute on a real-time demo clock', (t) => {
  const config = loadConfig({});
  t.is(config.SYNC_INTERVAL, 60_000);
  t.is(config.DEMO_CLOCK_SPEED, 1);
});

test('When they are set, then a duration of whole seconds and a positive speed are taken', (t) => {
  const config = loadConfig({ SYNC_INTERVAL: '30s', DEMO_CLOCK_SPEED: '60' });
  t.is(config.SYNC_INTERVAL, 30_000);
  t.is(config.DEMO_CLOCK_SPEED, 60);
  t.is(loadConfig({ SYNC_INTERVAL: '5m' }).SYNC_INTERVAL, 300_000);
});

test('When they are bad, then start-up fails naming the variable', (t) => {
  for (const env of [{ SYNC_INTERVAL: '500ms' }, { SYNC_INTERVAL: 'often' }, { SYNC_INTERVAL: '0s' }, { DEMO_CLOCK_SPEED: '0' }, { DEMO_CLOCK_SPEED: 'fast' }]) {
    const error = t.throws(() => loadConfig(env), { instanceOf: ConfigError });
    t.regex(error!.message, new RegExp(Object.keys(env)[0]));
  }
});
