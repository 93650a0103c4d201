// Lets the pinned MCP conformance suite start on Node 20 (`node --import ./scripts/mcp-conformance-node20.mjs ...`).
// The suite imports `globSync` from `fs` (Node 22+) for its `tier-check` command only; the server scenarios we run never
// call it. Imported with --import, this file registers itself as a module hook that hands the suite an `fs` with a
// `globSync` that throws. On Node 22+ it changes nothing.
import fs from 'node:fs';
import { register } from 'node:module';

const FS_WITH_GLOB = `data:text/javascript,${encodeURIComponent(
  "export * from 'node:fs'; export { default } from 'node:fs';\n" +
  "export function globSync() { throw new Error('fs.globSync needs Node 22 (only the conformance tier-check uses it)'); }\n",
)}`;

/** Module hook: `fs` imported by the conformance suite resolves to node:fs plus the stub. */
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) {
    return { url: FS_WITH_GLOB, shortCircuit: true };
  }
  return next(specifier, context);
}

if (typeof fs.globSync !== 'function' && !process.env.MCP_CONFORMANCE_HOOKED) {
  process.env.MCP_CONFORMANCE_HOOKED = '1';
  register(import.meta.url);
}
