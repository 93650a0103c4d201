// Regenerates the generated parts of the docs from the code: docs/openapi.json, the README's error codes and MCP tool table.
import fs from 'node:fs';
import { buildOpenApiDocument } from '../dist/api/openapi.js';
import { errorCodesMarkdown } from '../dist/src/errors.js';
import { withToolsSection } from '../dist/api/mcp/toolsDoc.js';

fs.mkdirSync('docs', { recursive: true });
fs.writeFileSync('docs/openapi.json', JSON.stringify(buildOpenApiDocument(), null, 2) + '\n');
const readme = fs.readFileSync('README.md', 'utf8');
const start = readme.indexOf('<!-- error-codes:start');
const end = readme.indexOf('<!-- error-codes:end -->');
const startLineEnd = readme.indexOf('\n', start) + 1;
fs.writeFileSync('README.md', withToolsSection(readme.slice(0, startLineEnd) + errorCodesMarkdown() + '\n' + readme.slice(end)));
console.log('docs/openapi.json, README error codes and MCP tool table written');
