/** The operator command line (D11): `npm run cli -- <command> [--json]`; stands for a person in the application. */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/index.js';
import { migrateLatest, type Db } from '../db/knex.js';
import { automationsCommand, automationsUsage } from '../cli/automations.js';
import { keysCommand } from '../cli/keys.js';
import { medusaCommand, medusaUsage } from '../cli/medusa.js';
import { peopleCommand, peopleUsage } from '../cli/people.js';
import { secretsCommand, secretsUsage } from '../cli/secrets.js';
import { shopsCommand, shopsUsage } from '../cli/shops.js';
import { accountsCommand, accountsUsage } from '../cli/setup.js';
import { loadSecrets } from '../secrets.js';
import { planCommand, webhooksCommand, webhooksUsage } from '../cli/webhooks.js';
import { print, UsageError } from '../cli/output.js';
import { ensurePostgres } from '../runtime.js';
import { compose, temporalAddressOf } from './compose.js';
import { loadBenchAccount, loadDemoAccounts } from '../platforms/registry.js';

const usage = `Usage: npm run cli -- <command> [--json]

  keys create --name N --scopes a,b|all --interfaces rest|mcp|rest,mcp --shops all|sk,cz [--account CODE] [--expires-in 30d]
  keys list [--account CODE]
  keys revoke ID [--account CODE]
${accountsUsage}${webhooksUsage}${shopsUsage}${secretsUsage}${automationsUsage}${peopleUsage}${medusaUsage}  db migrate
  demo load [--size demo|bench] [--seed N] [--orders N]   (bench: an account "bench" with ~1,000,000 orders, via COPY)
`;

async function demoCommand(db: Db, argv: string[], seed: number): Promise<void> {
  const [action, ...rest] = argv;
  if (action !== 'load') throw new UsageError('demo load [--size demo|bench]');
  const { values } = parseArgs({ args: rest, options: { size: { type: 'string', default: 'demo' }, seed: { type: 'string' }, orders: { type: 'string' }, json: { type: 'boolean', default: false } } });
  const useSeed = values.seed ? Number(values.seed) : seed;
  if (!Number.isInteger(useSeed)) throw new UsageError('--seed must be an integer.');
  if (values.size === 'demo') {
    const result = await loadDemoAccounts(db, { seed: useSeed, endDate: new Date() });
    print(values.json!, { result }, `Demo accounts loaded: ${JSON.stringify(result)}`);
    return;
  }
  if (values.size !== 'bench') throw new UsageError('--size must be demo or bench.');
  const orders = values.orders ? Number(values.orders) : 1_000_000;
  if (!Number.isInteger(orders) || orders < 1) throw new UsageError('--orders must be a positive integer.');
  const started = Date.now();
  const result = await loadBenchAccount(db, {
    seed: useSeed, endDate: new Date(), orders,
    onProgress: (done: number, total: number) => {
      if (!values.json) process.stderr.write(`\r  bench data: ${done.toLocaleString('en')} / ${total.toLocaleString('en')} orders (${Math.round((done / total) * 100)}%)   `);
    },
  });
  if (!values.json) process.stderr.write('\n');
  print(values.json!, { result, seconds: (Date.now() - started) / 1000 }, `Bench account loaded in ${((Date.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(result)}`);
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') {
    process.stdout.write(usage);
    return command ? 0 : 2;
  }
  const config = loadConfig();
  const postgres = await ensurePostgres(config);
  // Temporal is optional here: commands that tell a workflow at once connect on first use, in 2 s or not at all.
  const service = compose(config, { databaseUrl: postgres.value, temporalAddress: temporalAddressOf(config), stop: postgres.stop }, { poolMax: 4, temporalConnectTimeoutMs: 2_000 });
  const { db } = service;
  try {
    await migrateLatest(db);
    if (command === 'keys') await keysCommand(db, rest);
    else if (command === 'webhooks') await webhooksCommand(db, service, rest);
    else if (command === 'plan') await planCommand(db, rest);
    else if (command === 'shops') await shopsCommand(db, rest, { platforms: service.platforms, secretsKey: loadSecrets(config).secretsKey });
    else if (command === 'accounts') await accountsCommand(db, rest);
    else if (command === 'secrets') await secretsCommand(db, config, rest);
    else if (command === 'automations') await automationsCommand(db, rest);
    else if (command === 'people') await peopleCommand(db, rest);
    else if (command === 'medusa') await medusaCommand(db, service.platforms, service.secrets.secretsKey, config.PUBLIC_BASE_URL, rest);
    else if (command === 'db' && rest[0] === 'migrate') print(rest.includes('--json'), { migrated: true }, 'Schema is up to date.');
    else if (command === 'demo') await demoCommand(db, rest, config.DEMO_SEED);
    else throw new UsageError(`Unknown command: ${command}\n\n${usage}`);
    return 0;
  } finally {
    await service.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    if (error instanceof UsageError || error instanceof ConfigError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(error as Error).message}\n`);
      process.exit(2);
    }
    process.stderr.write(`${(error as Error).stack ?? error}\n`);
    process.exit(1);
  },
);
