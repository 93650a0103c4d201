/**
 * The web chatbot over the real HTTP server and a real Postgres: outcomes and statistics against figures computed here
 * from raw rows, N/A (never 0 %) when the denominator is zero, conversations by cursor with transcripts, topics.
 */
import type { ExecutionContext } from 'ava';
import { appTest, type AppContext } from '../helpers/app.js';
import { issueKey } from '../helpers/server.js';
import { TEST_NOW } from '../helpers/constants.js';
import { get } from '../helpers/rest.js';
import { shopOf } from '../helpers/shops.js';

const test = appTest({ scopes: ['chatbot:read', 'chatbot-conversations:read'] });
type Context = AppContext;
const DAY_MS = 86_400_000;

const dayIn = (timeZone: string, d: Date) => new Intl.DateTimeFormat('en-CA', { timeZone }).format(d);

async function rawConversations(t: ExecutionContext<Context>, shop: { id: string; timeZone: string }, from: string, to: string) {
  const rows = await t.context.database.db('chatbot_conversations').where({ shop_id: shop.id }).select('id', 'started_at', 'outcome', 'rating', 'messages', 'topic');
  return rows.filter((r) => dayIn(shop.timeZone, r.started_at) >= from && dayIn(shop.timeZone, r.started_at) <= to);
}

test('When outcomes are read, then the totals and the resolution rate equal those computed from the raw conversations', async (t) => {
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const res = await get(t, '/chatbot/outcomes?market=sk');
  t.is(res.status, 200, JSON.stringify(res.body));
  const { from, to } = res.body.meta.period;
  const raw = await rawConversations(t, shop, from, to);
  const count = (o: string | null) => raw.filter((r) => r.outcome === o).length;
  const d = res.body.data;
  t.is(d.conversations, raw.length);
  t.is(d.unmeasured, count(null));
  t.is(d.resolved, count('resolved'));
  t.is(d.unresolved, count('unresolved'));
  t.is(d.botError, count('bot_error'));
  t.is(d.unknownOutcome, count('unknown'));
  const known = count('resolved') + count('unresolved') + count('bot_error');
  t.true(known > 0);
  t.is(d.resolutionRate.denominator, known);
  t.is(d.resolutionRate.value, Number((count('resolved') / known).toFixed(4)));
  t.is(d.resolutionRate.notApplicableReason, null);
});

test('When the denominator is zero, then the resolution rate is N/A with a reason, never 0 %', async (t) => {
  // pl measures no outcomes; sk measured nothing before its measurement start; nothing happened before the chatbot was installed.
  const sk = await t.context.database.db('chatbot_settings as c').join('shops as s', 's.id', 'c.shop_id').join('accounts as a', 'a.id', 's.account_id')
    .where({ 'a.code': 'demo', 's.code': 'sk' }).first('c.installed_at', 'c.outcomes_measured_since');
  const zone = 'Europe/Bratislava';
  const beforeMeasuring = `from=${dayIn(zone, new Date(sk.installed_at.getTime() + DAY_MS))}&to=${dayIn(zone, new Date(sk.outcomes_measured_since.getTime() - 2 * DAY_MS))}`;
  const beforeInstall = `from=${dayIn(zone, new Date(sk.installed_at.getTime() - 20 * DAY_MS))}&to=${dayIn(zone, new Date(sk.installed_at.getTime() - 10 * DAY_MS))}`;
  for (const [path, reason] of [
    ['/chatbot/outcomes?market=pl', /not measured/],
    [`/chatbot/outcomes?market=sk&${beforeMeasuring}`, /measurement started/],
    [`/chatbot/outcomes?market=sk&${beforeInstall}`, /No conversation/],
  ] as const) {
    const res = await get(t, path);
    t.is(res.status, 200, JSON.stringify(res.body));
    const rate = res.body.data.resolutionRate;
    t.is(rate.value, null, path);
    t.is(rate.display, 'N/A', path);
    t.is(rate.denominator, 0, path);
    t.regex(rate.notApplicableReason, reason, path);
    t.false(JSON.stringify(res.body).includes('0 %'), path);
  }
  const pl = await get(t, '/chatbot/outcomes?market=pl');
  t.is(pl.body.data.measuredSince, null);
  t.true(pl.body.data.conversations > 0 && pl.body.data.unmeasured === pl.body.data.conversations);
});

test('When statistics are read for a period, then the funnel, outcomes and ratings equal the raw figures', async (t) => {
  const shop = await shopOf(t.context.database.db, 'demo', 'cz');
  const from = '2026-10-01';
  const to = '2026-10-31';
  const res = await get(t, `/chatbot/stats?market=cz&from=${from}&to=${to}`);
  t.is(res.status, 200);
  const daily = await t.context.database.db('chatbot_daily').where({ shop_id: shop.id }).whereBetween('day', [from, to]).select('bubble_shown', 'bubble_opened', 'conversations_started');
  const sum = (k: string) => daily.reduce((a, r: any) => a + r[k], 0);
  t.is(res.body.data.bubble.shown, sum('bubble_shown'));
  t.is(res.body.data.bubble.opened, sum('bubble_opened'));
  t.is(res.body.data.bubble.conversationsStarted, sum('conversations_started'));
  const raw = await rawConversations(t, shop, from, to);
  t.is(res.body.data.conversations.total, raw.length);
  t.is(res.body.data.conversations.messages, raw.reduce((a, r) => a + r.messages, 0));
  const rated = raw.filter((r) => r.rating !== null);
  t.is(res.body.data.ratings.count, rated.length);
  t.is(res.body.data.ratings.average, Math.round((rated.reduce((a, r) => a + r.rating, 0) / rated.length) * 100) / 100);
  t.is(res.body.data.outcomes.unmeasured, raw.filter((r) => r.outcome === null).length);
  const empty = await get(t, '/chatbot/stats?market=cz&from=2025-01-01&to=2025-01-31');
  t.is(empty.body.data.bubble.openRate, null);
  t.is(empty.body.data.ratings.average, null);
});

test('When conversations are walked by cursor, then every one comes once, most recently active first, and a transcript has its messages and sources', async (t) => {
  const shop = await shopOf(t.context.database.db, 'demo', 'hu');
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const res = await get(t, `/chatbot/conversations?market=hu&limit=250${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    t.is(res.status, 200);
    all.push(...res.body.data);
    cursor = res.body.meta.nextCursor;
  } while (cursor);
  const [{ n }] = await t.context.database.db('chatbot_conversations').where({ shop_id: shop.id }).count<{ n: string }[]>({ n: '*' });
  t.is(all.length, Number(n));
  t.is(new Set(all.map((c) => c.sessionId)).size, all.length);
  for (let i = 1; i < all.length; i++) t.true(all[i - 1].lastActivityAt >= all[i].lastActivityAt);
  const product = all.find((c) => c.topic === 'product_question' && c.outcome === 'resolved');
  const detail = await get(t, `/chatbot/conversations/${product.sessionId}?market=hu`);
  t.is(detail.status, 200);
  t.is(detail.body.data.transcript.length, product.messages);
  t.is(detail.body.data.transcript[0].text, product.firstQuestion);
  const bot = detail.body.data.transcript.find((m: any) => m.role === 'bot');
  t.is(bot.sources[0].ref, product.productCodes[0]);
  const exists = await t.context.database.db('products').where({ shop_id: shop.id, code: product.productCodes[0] }).first('code');
  t.truthy(exists, 'the conversation is about a real product');
  t.is((await get(t, `/chatbot/conversations/${product.sessionId}?market=sk`)).status, 404);
  t.is((await get(t, '/chatbot/conversations/bad%20id?market=sk')).status, 400);
  const statsOnly = await issueKey(t.context.database.db, { scopes: ['chatbot:read'] });
  t.is((await get(t, '/chatbot/conversations?market=sk', statsOnly)).status, 403);
});

test('When more than 20 questions went wrong in a period, then the 20 most frequent are the knowledge-gap candidates; fewer are listed whole (A12)', async (t) => {
  const db = t.context.database.db;
  const shop = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'sk' }).first('s.id');
  // The raw candidates of a period: first questions whose conversation went wrong or had bot answers without sources.
  const candidates = async (from: string, to: string) => Number((await db.raw(`
    select count(distinct (c.topic, c.first_question))::int as n from chatbot_conversations c
    where c.shop_id = ? and c.started_at >= (?::date)::timestamp at time zone 'Europe/Bratislava'
      and c.started_at < (?::date + 1)::timestamp at time zone 'Europe/Bratislava'
      and (c.outcome in ('unresolved', 'bot_error')
        or not exists (select 1 from chatbot_messages m where m.conversation_id = c.id and m.role = 'bot' and jsonb_array_length(m.sources) > 0))`,
  [shop.id, from, to])).rows[0].n);
  const gapsOf = async (from: string, to: string) => (await get(t, `/chatbot/topics?market=sk&from=${from}&to=${to}`)).body.data.knowledgeGapCandidates as Array<{ conversations: number }>;
  t.true(await candidates('2026-08-01', '2026-11-20') > 21);
  const many = await gapsOf('2026-08-01', '2026-11-20');
  t.is(many.length, 20);
  t.deepEqual(many.map((g) => g.conversations), [...many.map((g) => g.conversations)].sort((a, b) => b - a), 'most frequent first');
  const few = await candidates('2026-11-18', '2026-11-19');
  t.true(few > 0 && few < 20, String(few));
  t.is((await gapsOf('2026-11-18', '2026-11-19')).length, few);
});

test('When topics are read, then shares add up, products are the shop\'s, and knowledge gaps are questions that went wrong', async (t) => {
  const res = await get(t, '/chatbot/topics?market=sk');
  t.is(res.status, 200);
  const d = res.body.data;
  t.is(d.topics.reduce((a: number, x: any) => a + x.conversations, 0), d.conversations);
  t.true(Math.abs(d.topics.reduce((a: number, x: any) => a + x.share, 0) - 1) < 0.001);
  const productTopic = d.topics.find((x: any) => x.topic === 'product_question');
  t.true(productTopic.products.length > 0);
  for (const p of productTopic.products) t.truthy(p.name, `${p.productCode} is a catalogue product`);
  t.true(d.knowledgeGapCandidates.length > 0);
  for (const g of d.knowledgeGapCandidates) t.true(g.unresolved + g.botError + g.answersWithoutSources > 0, g.question);
  t.true(new Date(d.knowledgeGapCandidates[0].lastAskedAt).getTime() <= TEST_NOW.getTime());
});
