/**
 * `webhooks create|list|show|enable|disable|delete|rotate-secret|ping|retry` and `plan set`: the person-in-the-
 * application actions on webhook endpoints and the plan (D11). Each change is one transaction in Postgres; the worker's
 * dispatcher acts on it within a second (starts a ping's or a retry's delivery, wakes held deliveries), so a command
 * never depends on reaching Temporal. When Temporal is reachable (TEMPORAL_ADDRESS, or the dev server of `npm start`
 * on TEMPORAL_PORT), enable/disable/delete also tell the endpoint's actor at once.
 */
import { parseArgs } from 'node:util';
import type { Service } from '../entry/compose.js';
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { findAccountByCode } from '../queries/shops.js';
import { getWebhookEndpoint, listWebhookDeliveries, listWebhookEndpoints, type WebhookEndpointView } from '../queries/webhooks.js';
import { notifyEndpointActor } from '../temporal/webhooks.js';
import {
  createEndpoint, deleteEndpoint, disableEndpoint, enableEndpoint, pingEndpoint, retryDelivery, rotateEndpointSecret,
} from '../webhooks/endpoints.js';
import { webhookEntitlement } from '../webhooks/plan.js';
import { print, UsageError } from './output.js';

export const webhooksUsage = `  webhooks create --name N --url URL --events a,b|all --shops all|sk,cz [--account CODE]
  webhooks list [--account CODE]
  webhooks show|enable|disable|delete|rotate-secret|ping ID [--account CODE]
  webhooks retry DELIVERY_ID [--account CODE]
  plan set PLAN [--account CODE]        (trial, beginner, start, growth, pro, custom)
  (ping and retry wait up to --wait 15s for the attempt's outcome; --wait 0s returns at once)
`;

async function account(db: Db, code: string) {
  const found = await findAccountByCode(db, code);
  if (!found) throw new UsageError(`No account \`${code}\`.`);
  return found;
}

/** A refusal of the service (plan, URL, state, not found) is a usage error: exit 2 with its code. */
async function refusalsAsUsage<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof AppError) throw new UsageError(`${error.code}: ${error.message}`);
    throw error;
  }
}

function list(text: string | undefined, option: string): string[] | 'all' {
  if (!text) throw new UsageError(`--${option} is required (all, or a comma list).`);
  return text === 'all' ? 'all' : text.split(',').map((s) => s.trim()).filter(Boolean);
}

function endpointLine(e: WebhookEndpointView): string {
  const events = e.events.all ? 'all' : e.events.types.join(',');
  const shops = e.shops.all ? 'all' : e.shops.codes.join(',');
  const paused = e.state === 'paused' ? ` (${e.pauseReason})` : '';
  return `${e.endpointId}  ${e.state}${paused}  ${e.name}  ${e.url}  events=${events}  shops=${shops}  pending=${e.queue.pendingDeliveries}`;
}

/** Polls the delivery until an attempt after `afterAttempts` is logged or it leaves PENDING, for at most `waitMs`. */
async function waitForAttempt(db: Db, deliveryId: string, afterAttempts: number, waitMs: number) {
  const until = Date.now() + waitMs;
  for (;;) {
    const row = await db('webhook_deliveries').where({ id: deliveryId }).first('status', 'attempts', 'last_http_status');
    if (row.attempts > afterAttempts || row.status !== 'PENDING' || Date.now() >= until) {
      return { status: row.status as string, attempts: row.attempts as number, httpStatus: row.last_http_status as number | null, waited: row.attempts > afterAttempts };
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

function waitOption(text: string | undefined): number {
  if (!text) return 15_000;
  const m = /^(\d+)(ms|s)$/.exec(text);
  if (!m) throw new UsageError('--wait must be a duration such as 15s or 0s.');
  return Number(m[1]) * (m[2] === 's' ? 1000 : 1);
}

const temporalNote = (reached: boolean) => (reached ? '' : '\n(Temporal was not reachable; the worker\'s dispatcher applies it when it runs.)');

export async function webhooksCommand(db: Db, service: Pick<Service, 'application' | 'temporal'>, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      name: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' }, shops: { type: 'string' },
      account: { type: 'string', default: 'demo' }, wait: { type: 'string' }, json: { type: 'boolean', default: false },
    },
  });
  const acct = await account(db, values.account!);
  const json = values.json!;
  const id = positionals[0];
  const needId = () => {
    if (!id || !/^\d+$/.test(id)) throw new UsageError(`webhooks ${action} ID (a number from webhooks list)`);
    return id;
  };
  await refusalsAsUsage(async () => {
    switch (action) {
      case 'create': {
        if (!values.name) throw new UsageError('--name is required.');
        if (!values.url) throw new UsageError('--url is required (https://…).');
        const created = await createEndpoint(db, { secretsKey: service.application.secretsKey(), allowLoopback: service.application.allowLoopback, resolve: service.application.resolve }, {
          accountId: acct.id, name: values.name, url: values.url, events: list(values.events, 'events'), shops: list(values.shops, 'shops'), createdBy: 'cli',
        });
        print(json, created, `Created webhook endpoint ${created.id}. Its signing secret is shown only now:\n\n  ${created.secret}\n`);
        return;
      }
      case 'list': {
        const endpoints = await listWebhookEndpoints(db, acct.id, null);
        print(json, { endpoints }, endpoints.length ? endpoints.map(endpointLine).join('\n') : '(no webhook endpoints)');
        return;
      }
      case 'show': {
        const endpoint = await getWebhookEndpoint(db, acct.id, needId(), null);
        if (!endpoint) throw new UsageError(`No webhook endpoint ${id} in account ${acct.code}.`);
        const { items } = await listWebhookDeliveries(db, endpoint.endpointId, null, undefined, { limit: 10, after: null });
        const lines = items.map((d) => `  ${d.deliveryId}  ${d.status}  ${d.eventType}  attempts=${d.attempts}  http=${d.lastHttpStatus ?? '-'}  ${d.createdAt}`);
        print(json, { endpoint, recentDeliveries: items }, [endpointLine(endpoint), `secret rotated: ${endpoint.secretRotatedAt ?? 'never'}`, 'recent deliveries:', ...(lines.length ? lines : ['  (none)'])].join('\n'));
        return;
      }
      case 'enable': {
        const result = await enableEndpoint(db, acct.id, needId());
        const reached = await notifyEndpointActor(service.temporal, id);
        print(json, result, `Endpoint ${id} is enabled (was ${result.previousState}); waiting deliveries are delivered now.${temporalNote(reached)}`);
        return;
      }
      case 'disable': {
        const result = await disableEndpoint(db, acct.id, needId());
        await notifyEndpointActor(service.temporal, id);
        print(json, result, `Endpoint ${id} is disabled; ${result.skipped} pending deliveries were skipped.`);
        return;
      }
      case 'delete': {
        const result = await deleteEndpoint(db, acct.id, needId());
        await notifyEndpointActor(service.temporal, id);
        print(json, result, `Endpoint ${id} is deleted (its delivery log remains); ${result.skipped} pending deliveries were skipped.`);
        return;
      }
      case 'rotate-secret': {
        const result = await rotateEndpointSecret(db, { secretsKey: service.application.secretsKey() }, acct.id, needId());
        print(json, result, `New signing secret of endpoint ${id} (the old one is no longer valid), shown only now:\n\n  ${result.secret}\n`);
        return;
      }
      case 'ping': {
        const waitMs = waitOption(values.wait);
        const ping = await pingEndpoint(db, acct.id, needId());
        const outcome = await waitForAttempt(db, ping.deliveryId, 0, waitMs);
        print(json, { ...ping, ...outcome }, outcome.waited
          ? `Test delivery ${ping.deliveryId} (event ${ping.eventId}): ${outcome.status}, HTTP ${outcome.httpStatus ?? '-'}.`
          : `Test delivery ${ping.deliveryId} (event ${ping.eventId}) is queued; the worker sends it (see webhooks show ${id}).`);
        return;
      }
      case 'retry': {
        if (!id) throw new UsageError('webhooks retry DELIVERY_ID');
        const waitMs = waitOption(values.wait);
        const retried = await retryDelivery(db, acct.id, id);
        const outcome = await waitForAttempt(db, id, retried.attempts, waitMs);
        print(json, { deliveryId: id, ...outcome }, outcome.waited
          ? `Delivery ${id}, attempt ${outcome.attempts}: ${outcome.status}, HTTP ${outcome.httpStatus ?? '-'}.`
          : `Delivery ${id} is PENDING again; the worker makes the attempt.`);
        return;
      }
      default:
        throw new UsageError(`webhooks create|list|show|enable|disable|delete|rotate-secret|ping|retry\n\n${webhooksUsage}`);
    }
  });
}

/** `plan set PLAN`: changes the account's plan (D12). A lower plan keeps endpoints; one without webhooks holds deliveries until restored. */
export async function planCommand(db: Db, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { account: { type: 'string', default: 'demo' }, json: { type: 'boolean', default: false } } });
  if (action !== 'set' || !positionals[0]) throw new UsageError('plan set PLAN [--account CODE]');
  const acct = await account(db, values.account!);
  const plans: string[] = await db('plans').orderBy('sort_order').pluck('code');
  if (!plans.includes(positionals[0])) throw new UsageError(`Unknown plan ${positionals[0]}; plans: ${plans.join(', ')}.`);
  await db('accounts').where({ id: acct.id }).update({ plan_code: positionals[0] });
  const webhooks = await webhookEntitlement(db, acct.id);
  const note = !webhooks.enabled
    ? 'outbound webhooks are not in this plan: deliveries wait until a plan with webhooks is set'
    : `webhook endpoints: ${webhooks.usage} of ${webhooks.limit ?? 'unlimited'}${webhooks.limit !== null && webhooks.usage > webhooks.limit ? ' (over the limit: no new ones until under it)' : ''}`;
  print(values.json!, { account: acct.code, plan: positionals[0], webhooks }, `Account ${acct.code} is on plan ${positionals[0]}; ${note}.`);
}
