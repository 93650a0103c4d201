// Regenerates the generated parts of the docs from the code: docs/openapi.json, the error codes (docs/rest.md) and the MCP tool table (docs/mcp.md).
import fs from 'node:fs';
import { buildOpenApiDocument } from '../dist/api/openapi.js';
import { errorCodesMarkdown } from '../dist/src/errors.js';
import { withToolsSection } from '../dist/api/mcp/toolsDoc.js';

fs.mkdirSync('docs', { recursive: true });
fs.writeFileSync('docs/openapi.json', JSON.stringify(buildOpenApiDocument(), null, 2) + '\n');
const rest = fs.readFileSync('docs/rest.md', 'utf8');
const start = rest.indexOf('<!-- error-codes:start');
const end = rest.indexOf('<!-- error-codes:end -->');
const startLineEnd = rest.indexOf('\n', start) + 1;
fs.writeFileSync('docs/rest.md', rest.slice(0, startLineEnd) + errorCodesMarkdown() + '\n' + rest.slice(end));
fs.writeFileSync('docs/mcp.md', withToolsSection(fs.readFileSync('docs/mcp.md', 'utf8')));
console.log('docs/openapi.json, the error codes in docs/rest.md and the MCP tool table in docs/mcp.md written');
