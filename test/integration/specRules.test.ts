/**
 * Issue 23.6: rules SPEC states, checked from outside over REST and MCP. Each test failed on the old behaviour
 * (hasMore/nextCursor were inside `data`).
 */
import { appTest } from '../helpers/app.js';
import { api, issueKey } from '../helpers/server.js';
import { connectModern } from '../helpers/mcp.js';

const test = appTest();

const PAGED_SUMMARIES = [
  { path: '/customers/performance?market=sk&limit=1', tool: 'customers_performance', args: { market: 'sk', limit: 1 } },
  { path: '/sales/order-performance?market=sk&from=2026-10-01&to=2026-10-31&limit=1', tool: 'sales_order_performance', args: { market: 'sk', from: '2026-10-01', to: '2026-10-31', limit: 1 } },
  { path: '/sales/product-performance?market=sk&from=2026-10-01&to=2026-10-31&limit=1', tool: 'sales_product_performance', args: { market: 'sk', from: '2026-10-01', to: '2026-10-31', limit: 1 } },
];

test('When a paged summary is read over REST, then hasMore and nextCursor are in meta (SPEC envelope), not in data, and the cursor continues', async (t) => {
  for (const { path } of PAGED_SUMMARIES) {
    const first = await api(t.context.server, path, t.context.key);
    t.is(first.status, 200, path);
    t.false('hasMore' in first.body.data, `${path}: no hasMore in data`);
    t.false('nextCursor' in first.body.data, `${path}: no nextCursor in data`);
    t.is(first.body.meta.hasMore, true, `${path}: a second page exists with limit 1`);
    t.is(typeof first.body.meta.nextCursor, 'string', path);
    const second = await api(t.context.server, `${path}&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`, t.context.key);
    t.is(second.status, 200, `${path} page 2`);
    t.notDeepEqual(second.body.data, first.body.data, `${path}: page 2 differs`);
  }
});

test('When a paged summary is called over MCP, then hasMore and nextCursor sit beside data, not inside it', async (t) => {
  const client = await connectModern(t.context.server, t.context.key);
  try {
    for (const { tool, args } of PAGED_SUMMARIES) {
      const result = await client.callTool({ name: tool, arguments: args });
      const content = result.structuredContent as { data: Record<string, unknown>; hasMore: boolean; nextCursor: string | null };
      t.falsy(result.isError, tool);
      t.false('nextCursor' in content.data, tool);
      t.is(content.hasMore, true, tool);
      t.is(typeof content.nextCursor, 'string', tool);
    }
  } finally {
    await client.close();
  }
});

test('When a supplier is read without purchase-prices:read, then its offers carry no price; with it, every offer has one (SPEC scope-to-data rules)', async (t) => {
  const db = t.context.database.db;
  const plain = await issueKey(db, { scopes: ['purchasing:read'] });
  const withPrices = await issueKey(db, { scopes: ['purchasing:read', 'purchase-prices:read'] });
  const list = await api(t.context.server, '/suppliers?market=cz', plain);
  const supplierId = list.body.data[0].supplierId;
  const without = await api(t.context.server, `/suppliers/${supplierId}?market=cz`, plain);
  t.is(without.status, 200);
  t.true(without.body.data.offers.length > 0);
  for (const offer of without.body.data.offers) t.false('price' in offer, `${offer.productCode}: price needs purchase-prices:read`);
  const full = await api(t.context.server, `/suppliers/${supplierId}?market=cz`, withPrices);
  for (const offer of full.body.data.offers) t.is(typeof offer.price?.amount, 'string', `${offer.productCode}: price with the scope`);
  const client = await connectModern(t.context.server, plain);
  try {
    const result = await client.callTool({ name: 'suppliers_get', arguments: { market: 'cz', supplierId } });
    const content = result.structuredContent as { data: { offers: Record<string, unknown>[] } };
    t.falsy(result.isError);
    t.true(content.data.offers.length > 0);
    for (const offer of content.data.offers) t.false('price' in offer, 'MCP: no price without the scope');
  } finally {
    await client.close();
  }
});

test('When chatbot topics are read without chatbot-conversations:read, then knowledge-gap candidates carry no shopper question; with it, they do', async (t) => {
  const db = t.context.database.db;
  const plain = await api(t.context.server, '/chatbot/topics?market=sk', await issueKey(db, { scopes: ['chatbot:read'] }));
  t.is(plain.status, 200);
  t.true(plain.body.data.knowledgeGapCandidates.length > 0);
  for (const gap of plain.body.data.knowledgeGapCandidates) {
    t.false('question' in gap, 'question needs chatbot-conversations:read');
    t.is(typeof gap.conversations, 'number');
  }
  const full = await api(t.context.server, '/chatbot/topics?market=sk', await issueKey(db, { scopes: ['chatbot:read', 'chatbot-conversations:read'] }));
  for (const gap of full.body.data.knowledgeGapCandidates) t.true(typeof gap.question === 'string' && gap.question.length > 0);
});
