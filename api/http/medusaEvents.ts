/**
 * POST /api/v1/platforms/medusa/events/{account}/{shop}: where a Medusa shop's forwarder posts (docs/medusa.md). A
 * verified event starts (or signals) the shop's near-real-time sync on Temporal; a refused one is logged and answered
 * with a coded error, and nothing is written.
 */
import express, { Router } from 'express';
import type { Db } from '../../src/db/knex.js';
import { AppError } from '../../src/errors.js';
import { logger } from '../../src/logger.js';
import { receiveForwardedEvent } from '../../src/platforms/medusa/inbound.js';
import type { TemporalAccess } from '../../src/temporal/access.js';
import { TASK_QUEUE, workflowIds } from '../../src/temporal/constants.js';
import { sendError } from './errors.js';

export const MEDUSA_EVENTS_PATH = '/api/v1/platforms/medusa/events';

export interface MedusaEventsDeps {
  db: Db;
  now: () => Date;
  secretsKey: () => Buffer;
  temporal?: TemporalAccess;
}

const REFUSALS = {
  unknown_shop: new AppError('SHOP_NOT_FOUND', 'No Medusa shop with this account and shop code is connected.'),
  bad_signature: new AppError('INVALID_CREDENTIALS', 'The X-Store-Ops-Signature does not verify with the shop\'s forwarding secret.'),
  stale_timestamp: new AppError('INVALID_CREDENTIALS', 'The X-Store-Ops-Timestamp is more than 300 s from now.'),
  malformed_body: new AppError('MALFORMED_REQUEST', 'The body is not a version 1 forwarded event ({version, id, event, occurred_at, data}).'),
} as const;

export function createMedusaEventsRouter(deps: MedusaEventsDeps): Router {
  const router = Router();
  router.post('/:account/:shop', express.raw({ type: () => true, limit: '64kb' }), async (req, res, next) => {
    try {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const outcome = await receiveForwardedEvent(deps.db, { current: deps.secretsKey() }, {
        accountCode: String(req.params.account), shopCode: String(req.params.shop), timestamp: req.header('x-store-ops-timestamp'),
        signature: req.header('x-store-ops-signature'), body, now: deps.now(),
      });
      if (!outcome.accepted) {
        logger.warn({ account: req.params.account, shop: req.params.shop, reason: outcome.reason, event: req.header('x-store-ops-event') ?? null },
          'forwarded Medusa event refused');
        sendError(res, req.requestId ?? 'unknown', REFUSALS[outcome.reason]);
        return;
      }
      if (!outcome.duplicate && deps.temporal) {
        try {
          const client = await deps.temporal.client();
          await client.workflow.signalWithStart('shopEventSyncWorkflow', {
            workflowId: workflowIds.shopEventSync(outcome.accountCode, outcome.shopCode),
            taskQueue: deps.temporal.taskQueue ?? TASK_QUEUE,
            args: [{ accountCode: outcome.accountCode, shopCode: outcome.shopCode }],
            signal: 'platformEvent',
            signalArgs: [{ event: outcome.event }],
          });
        } catch (err) {
          // The event is stored; the shop's Schedule reads the change on its next run. The forwarder never retries.
          logger.warn({ err, account: outcome.accountCode, shop: outcome.shopCode }, 'forwarded Medusa event stored, its sync not started (Temporal unreachable)');
        }
      }
      res.status(202).json({ received: true, duplicate: outcome.duplicate });
    } catch (error) {
      next(error);
    }
  });
  return router;
}
