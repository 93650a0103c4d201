/** The OpenAPI 3.1 document, generated from the capability registry and the error module. */
import { paramsJsonSchema, rulesNotInSchema, zodJsonSchema, type JsonSchema } from '../src/capabilities/jsonSchema.js';
import { restCapabilities } from '../src/capabilities/registry.js';
import { isListKind } from '../src/capabilities/run.js';
import type { RestCapability } from '../src/capabilities/types.js';
import { errorCatalogue, errorCodes } from '../src/errors.js';
import { allScopes } from '../src/auth/scopes.js';


const jsonSchema = zodJsonSchema;

const periodSchema = {
  type: 'object',
  required: ['from', 'to', 'timeZone'],
  properties: { from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' }, timeZone: { type: 'string', description: 'IANA time zone of the dates.' } },
  description: 'The period used (D5): inclusive calendar dates in the shop\'s time zone.',
};

function metaSchema(list: boolean, capability?: RestCapability): JsonSchema {
  const properties: Record<string, unknown> = {
    requestId: { type: 'string', description: 'Identifies the call; quote it to support.' },
    market: { type: 'string', description: 'The shop code the response is about.' },
    period: periodSchema,
  };
  const required = ['requestId'];
  if (list) {
    properties.count = { type: 'integer', description: 'Records in this response.' };
    properties.hasMore = { type: 'boolean', description: 'True when a next page exists.' };
    properties.nextCursor = { type: ['string', 'null'], description: 'Send back as `cursor`; null when there is no next page.' };
    required.push('count', 'hasMore', 'nextCursor');
  }
  if (capability?.meta) {
    const extra = jsonSchema(capability.meta, 'output') as { properties?: Record<string, unknown>; required?: string[] };
    Object.assign(properties, extra.properties);
    required.push(...(extra.required ?? []));
  }
  return { type: 'object', required, properties };
}

const errorResponses = Object.fromEntries(
  [...new Set(Object.values(errorCatalogue).map((e) => e.status))].sort().map((status) => {
    const codes = errorCodes.filter((c) => errorCatalogue[c].status === status);
    return [String(status), {
      description: codes.map((c) => `\`${c}\`: ${errorCatalogue[c].description}`).join('\n\n'),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
    }];
  }),
);

function operation(capability: RestCapability) {
  // The same schema the runner validates with, plus the bounds the runner adds (limit per kind, required period).
  const params = paramsJsonSchema(capability) as { properties?: Record<string, JsonSchema>; required?: string[] };
  const required = new Set(params.required ?? []);
  const parameters = Object.entries(params.properties ?? {}).map(([name, schema]) => {
    const inPath = capability.path.includes(`{${name}}`);
    const { description, ...rest } = schema;
    return { name, in: inPath ? 'path' : 'query', required: inPath || required.has(name), description, schema: rest, ...(rest.type === 'array' ? { style: 'form', explode: false } : {}) };
  });
  const result = jsonSchema(capability.result, 'output');
  const list = isListKind(capability);
  const extraScopes = capability.fieldScopes ? [...new Set(Object.values(capability.fieldScopes))] : [];
  const rules = rulesNotInSchema(capability);
  const rulesText = rules.length ? `\n\nRules the parameter schemas cannot express (refused with 400 and the code named):\n${rules.map((r) => `- \`${r.code}\`: ${r.rule}`).join('\n')}` : '';
  return {
    get: {
      operationId: capability.name,
      summary: capability.summary,
      description: capability.description + (extraScopes.length ? `\n\nFields needing extra scopes are absent without them: ${Object.entries(capability.fieldScopes!).map(([p, s]) => `\`${p}\` (${s})`).join(', ')}.` : '') + rulesText,
      'x-rules-not-in-schema': [...new Set(rules.map((r) => r.code))],
      tags: [capability.name.split('.')[0]],
      security: [{ bearerAuth: [capability.scope] }],
      'x-required-scope': capability.scope,
      'x-mcp-tool': capability.mcpTool,
      parameters,
      responses: {
        200: {
          description: capability.summary,
          content: { 'application/json': { schema: { type: 'object', required: ['data', 'meta'], properties: { data: list ? { type: 'array', items: result } : result, meta: metaSchema(list, capability) } } } },
        },
        ...errorResponses,
      },
    },
  };
}

/** Builds the whole document; deterministic, so it can be snapshotted. */
export function buildOpenApiDocument() {
  const paths: Record<string, unknown> = {};
  for (const capability of [...restCapabilities].sort((a, b) => a.path.localeCompare(b.path))) paths[capability.path] = operation(capability);
  paths['/capabilities'] = {
    get: {
      operationId: 'capabilities.list', summary: 'What the calling key may call.', tags: ['meta'], security: [{ bearerAuth: [] }],
      description: 'Exactly the calls the calling credential\'s scopes allow, not the whole catalogue. Needs a valid key but no scope.',
      responses: {
        200: { description: 'Allowed calls.', content: { 'application/json': { schema: { type: 'object', required: ['data', 'meta'], properties: { data: { type: 'array', items: { $ref: '#/components/schemas/CapabilitySummary' } }, meta: metaSchema(true) } } } } },
        ...errorResponses,
      },
    },
  };
  paths['/openapi.json'] = {
    get: { operationId: 'openapi.get', summary: 'This document.', tags: ['meta'], security: [], responses: { 200: { description: 'OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } }, ...errorResponses } },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Store-operations data service',
      version: '1.0.0',
      description: 'Read-only REST over the data of all shops of one account. Every response is `{data, meta}`; errors are `{error: {code, message, details}, meta}` with the codes below. Lists paginate by signed cursor (send `nextCursor` back as `cursor`).',
    },
    servers: [{ url: '/api/v1' }],
    security: [{ bearerAuth: [] }],
    tags: [...new Set(restCapabilities.map((c) => c.name.split('.')[0]))].sort().map((name) => ({ name })).concat([{ name: 'meta' }]),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: `Access key (\`sk_…\`) or OAuth token. Scopes: ${allScopes.join(', ')}.` },
      },
      schemas: {
        ErrorCode: { type: 'string', enum: errorCodes, 'x-enum-descriptions': Object.fromEntries(errorCodes.map((c) => [c, `${errorCatalogue[c].status}: ${errorCatalogue[c].description}`])) },
        ErrorBody: {
          type: 'object', required: ['error', 'meta'],
          properties: {
            error: { type: 'object', required: ['code', 'message'], properties: { code: { $ref: '#/components/schemas/ErrorCode' }, message: { type: 'string' }, details: { type: 'object', additionalProperties: true, description: 'E.g. the offending `param`.' } } },
            meta: { type: 'object', required: ['requestId'], properties: { requestId: { type: 'string' } } },
          },
        },
        CapabilitySummary: {
          type: 'object', required: ['name', 'method', 'path', 'scope', 'mcpTool', 'kind', 'marketRequired', 'summary'],
          properties: { name: { type: 'string' }, method: { type: 'string' }, path: { type: 'string' }, scope: { type: 'string' }, mcpTool: { type: ['string', 'null'] }, kind: { type: 'string' }, marketRequired: { type: 'boolean' }, summary: { type: 'string' } },
        },
      },
    },
  };
}
