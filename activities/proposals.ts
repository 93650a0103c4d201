/** Activities of the proposal workflow: thin wrappers over src/proposals, bound to the database and the platform adapters. */
import type { Db } from '../src/db/knex.js';
import type { PlatformRegistry } from '../src/platforms/registry.js';
import { finishProposal, loadProposalForWorkflow, recordDecision, type Decision, type ProposalForWorkflow } from '../src/proposals/lifecycle.js';
import type { ItemOutcome } from '../src/proposals/model.js';
import { writeProposalItem as writeItem } from '../src/proposals/write.js';
import { heartbeating } from './heartbeating.js';

export interface ProposalActivityDeps {
  db: Db;
  /** The shop platforms' adapters (the composition root's). */
  platforms: PlatformRegistry;
  /** A test seam: runs after the shop took an item's write, before its result is stored (the crash test kills the worker there). */
  afterProposalShopWrite?: (itemId: string) => Promise<void>;
}

export function createProposalActivities(deps: ProposalActivityDeps) {
  const platforms = deps.platforms;
  return {
    /** Reads the proposal the workflow runs for (kind, mode, expiry, items, a decision already recorded). */
    async loadProposal(input: { draftId: string }): Promise<ProposalForWorkflow> {
      return loadProposalForWorkflow(deps.db, input.draftId);
    },
    /** Records the person's (or the autonomous policy's) decision once. */
    async recordProposalDecision(input: { draftId: string; decision: Decision; atMs: number }): Promise<void> {
      await recordDecision(deps.db, input.draftId, input.decision, new Date(input.atMs));
    },
    /** Writes one item through the shop's adapter, or returns its stored result (idempotent). */
    async writeProposalItem(input: { itemId: string }): Promise<ItemOutcome> {
      return heartbeating(() => writeItem({ db: deps.db, platforms, afterShopWrite: deps.afterProposalShopWrite }, input.itemId));
    },
    /** Stores the final state. */
    async finishProposal(input: { draftId: string; status: string; atMs: number }): Promise<void> {
      await finishProposal(deps.db, input.draftId, input.status, new Date(input.atMs));
    },
  };
}
