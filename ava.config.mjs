// ava's configuration (a file, not package.json, because the file order is a function).

/**
 * The test files that take longest (wall time with 3 files at once, measured 2026-11-27), longest first. They start
 * first so that the run does not end on a tail of them with the other slots idle (decision Q15); the rest follow in
 * name order. A file missing here only starts later; the list needs no upkeep to stay correct.
 */
const SLOW_FIRST = [
  'contract/openapiFuzz', 'e2e/everyPage', 'contract/scopeMatrix', 'integration/setup', 'integration/webhooksScaleOut', 'integration/medusaAdapter',
  'e2e/automations', 'integration/webhooksDirect', 'integration/webhooks', 'workflows/proposalCrash', 'workflows/syncCrash',
  'workflows/demoDataLoad', 'integration/shippingRollups', 'integration/liveSync', 'integration/webhooksCrash',
  'integration/automationsRuns', 'workflows/syncSchedules', 'contract/shadowTenant', 'contract/periodMatrix',
  'integration/applicationPermissions', 'contract/stateMatrix', 'integration/applicationRecords', 'contract/boundsMatrix', 'contract/contrastMatrix',
  // Long in wall time, little CPU (they wait on child processes): in name order they came last and made the run's tail.
  'integration/automationsCli', 'integration/webhooksPostgresCrash', 'integration/start', 'workflows/affiliatePayoutHeartbeat',
  'workflows/automationCrash', 'workflows/affiliatePayoutCrash',
];

function rank(file) {
  const at = SLOW_FIRST.findIndex((name) => file.replaceAll('\\', '/').endsWith(`/dist/test/${name}.test.js`));
  return at === -1 ? SLOW_FIRST.length : at;
}

export default {
  files: ['dist/test/**/*.test.js'],
  timeout: '3m',
  workerThreads: false,
  // Four files at once on two cores: many files wait on Temporal, Postgres or child processes (Q15).
  concurrency: 4,
  sortTestFiles: (a, b) => rank(a) - rank(b) || a.localeCompare(b, [], { numeric: true }),
};
