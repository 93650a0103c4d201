// ESLint flat config: recommended rules for TypeScript, plus determinism guards for workflow code.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

// Node built-ins that must never reach the workflow sandbox (bare names; `node:*` is caught by a pattern).
const nodeBuiltins = [
  'fs', 'path', 'http', 'https', 'net', 'crypto', 'child_process', 'os', 'dns', 'process',
  'stream', 'zlib', 'url', 'util', 'worker_threads', 'timers',
];
// Libraries that do I/O; workflows reach them only through activities.
const ioLibraries = ['knex', 'pg', 'objection', 'undici', 'pino'];
const workflowMessage =
  'Workflow code must be deterministic: do I/O only through activities (proxyActivities), never import Node built-ins or I/O libraries.';

// The demo platform is one adapter (ground rule 3): only it, the platform registry that wires adapters, tests and
// benchmarks import it; everything else speaks the domain (src/records) and the port (src/platforms/types.ts).
const demoMessage =
  'Only src/platforms/demo, the platform registry (src/platforms/registry.ts, capabilities.ts), tests and benchmarks import the demo platform; use src/records and the port (src/platforms/types.ts).';
const demoPattern = { group: ['**/platforms/demo', '**/platforms/demo/**'], message: demoMessage };

export default defineConfig(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', 'data/**'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.{js,mjs}'],
    // Plain-JS scripts run on Node; `globals` is not installed, so list what they use.
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' },
    },
  },
  {
    // The MCP Apps' pages run in a browser frame, not on Node (issue 26.4).
    files: ['api/mcp/apps/**/*.js'],
    languageOptions: {
      globals: { window: 'readonly', document: 'readonly', DOMParser: 'readonly', ResizeObserver: 'readonly', Intl: 'readonly' },
    },
  },
  {
    rules: {
      // `_name` marks a value deliberately left unused (e.g. a property split off with rest syntax).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Database rows are loosely typed at the query boundary and mapped to typed objects right away.
      '@typescript-eslint/no-explicit-any': 'warn',
    },
  },
  {
    // Tests read JSON bodies of any shape.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.ts'],
    ignores: ['src/platforms/demo/**', 'src/platforms/registry.ts', 'src/platforms/capabilities.ts', 'test/**', 'bench/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [demoPattern] }] },
  },
  {
    // Same idea as temporalio/samples-typescript .shared/.eslintrc.js: the sandbox replays workflows. The domain's
    // records are pure for the same reason: workflows import them.
    files: ['workflows/**/*.ts', 'src/records/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...nodeBuiltins, ...ioLibraries].map((name) => ({ name, message: workflowMessage })),
          patterns: [
            // Subpaths too: `fs/promises`, `pino/file`, ...
            { group: ['node:*', ...[...nodeBuiltins, ...ioLibraries].map((name) => `${name}/*`)], message: workflowMessage },
            // This block replaces the one above for workflows, so it repeats the demo rule.
            demoPattern,
          ],
        },
      ],
    },
  },
);
