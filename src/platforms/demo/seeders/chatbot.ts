/**
 * The web chatbot the service runs on the demo shops' pages, seeded at demo load from new random streams (`chatbot-*`):
 * the daily bubble funnel, and conversations about the shop's real products, categories and orders, with the sources of
 * each bot answer, an outcome (once outcome measurement started) and sometimes a rating.
 */
import type { ShopDefinition } from '../catalogue.js';
import { createRandom, type Random } from '../random.js';
import type { SqlRunner } from '../../../affiliate/sql.js';
import { CHATBOT_TOPICS, type ChatbotTopic } from '../../../chatbot/topics.js';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** The chatbot went live this many days before the history end; outcomes are measured from 30 days later (not in `pl`). */
const INSTALLED_DAYS_BEFORE_END = 120;
const MEASURED_AFTER_DAYS = 30;
const UNMEASURED_SHOPS = new Set(['pl']);

interface Source { type: 'product' | 'category' | 'help_article' | 'order' | 'policy'; ref: string; title: string; url: string }

interface Planned { question: string; answer: string; sources: Source[]; follow?: [string, string]; productCodes: string[]; pageType: string; pageUrl: string; gap: boolean }

interface ShopData { base: string; products: Array<{ code: string; name: string; category_guid: string | null }>; orders: Array<{ code: string; created_at: Date }> }

function plan(rng: Random, topic: ChatbotTopic, data: ShopData, atMs: number): Planned {
  const policy = (ref: string, title: string): Source => ({ type: 'policy', ref, title, url: `${data.base}/help/${ref}` });
  const product = rng.pick(data.products);
  const productSource: Source = { type: 'product', ref: product.code, title: product.name, url: `${data.base}/product/${encodeURIComponent(product.code)}` };
  const home = `${data.base}/`;
  switch (topic) {
    case 'product_question': {
      const gap = rng.chance(0.2);
      return {
        question: rng.pick([`Is ${product.name} dishwasher safe?`, `What are the dimensions of ${product.name}?`, `Does ${product.name} come with a warranty?`]),
        answer: gap ? 'I am sorry, I do not have that information. Please contact our customer service.' : `Here is what the product page says about ${product.name}.`,
        sources: gap ? [] : [productSource], productCodes: [product.code], pageType: 'product', pageUrl: productSource.url, gap,
        follow: rng.chance(0.4) ? ['And is it in stock?', 'Yes, it is available for immediate dispatch.'] : undefined,
      };
    }
    case 'stock_availability':
      return {
        question: `When will ${product.name} be back in stock?`, answer: 'The product page shows the current availability and the expected date.',
        sources: [productSource], productCodes: [product.code], pageType: 'product', pageUrl: productSource.url, gap: false,
      };
    case 'shipping': {
      const guid = product.category_guid;
      const categoryUrl = guid ? `${data.base}/category/${guid}` : home;
      return {
        question: rng.pick(['How much is shipping?', 'Do you deliver to a pickup point?', 'How long does delivery take?']),
        answer: 'Shipping options and prices are listed in our shipping terms.', sources: [policy('shipping', 'Shipping and delivery')],
        productCodes: [], pageType: guid ? 'category' : 'home', pageUrl: categoryUrl, gap: false,
      };
    }
    case 'returns':
      return {
        question: rng.pick(['How do I return an item?', 'Can I return goods within 14 days?', 'Who pays for the return shipping?']),
        answer: 'You can withdraw within 14 days; the return form is in our returns policy.', sources: [policy('returns', 'Returns and withdrawal')],
        productCodes: [], pageType: 'help', pageUrl: `${data.base}/help/returns`, gap: false,
      };
    case 'order_status': {
      const recent = data.orders.filter((o) => o.created_at.getTime() < atMs && o.created_at.getTime() > atMs - 14 * DAY_MS);
      const order = recent.length ? rng.pick(recent) : null;
      const gap = order === null;
      return {
        question: order ? `Where is my order ${order.code}?` : 'Where is my order?',
        answer: order ? `Order ${order.code} is on its way; the tracking link is in your confirmation e-mail.` : 'I could not find the order. Please give me its number.',
        sources: order ? [{ type: 'order', ref: order.code, title: `Order ${order.code}`, url: `${data.base}/account/orders` }] : [],
        productCodes: [], pageType: 'other', pageUrl: `${data.base}/account/orders`, gap,
      };
    }
    case 'payment':
      return {
        question: rng.pick(['Can I pay by bank transfer?', 'Do you accept cash on delivery?', 'My card payment failed, what now?']),
        answer: 'The payment methods are listed in our terms; a failed card payment can be repeated from the order e-mail.',
        sources: [policy('payment', 'Payment methods')], productCodes: [], pageType: rng.pick(['cart', 'checkout']), pageUrl: `${data.base}/cart`, gap: false,
      };
    case 'discounts': {
      const gap = rng.chance(0.5);
      return {
        question: rng.pick(['Do you have a discount code?', 'Why does my coupon not work?']),
        answer: gap ? 'I am not able to check coupons. Please contact our customer service.' : 'Current offers are on our home page; a coupon applies in the cart.',
        sources: gap ? [] : [policy('offers', 'Current offers')], productCodes: [], pageType: 'cart', pageUrl: `${data.base}/cart`, gap,
      };
    }
  }
}

const TOPIC_WEIGHTS = [30, 18, 12, 16, 8, 8, 8];

/** Seeds one shop's chatbot: settings, the daily funnel and the conversations with their messages. */
export async function seedDemoChatbot(run: SqlRunner, input: { shopId: string; shop: ShopDefinition; shopSeed: number; historyEndMs: number }): Promise<void> {
  const k = run.knex;
  const endMs = input.historyEndMs;
  const installedMs = Math.floor((endMs - INSTALLED_DAYS_BEFORE_END * DAY_MS) / DAY_MS) * DAY_MS;
  const measuredMs = UNMEASURED_SHOPS.has(input.shop.code) ? null : installedMs + MEASURED_AFTER_DAYS * DAY_MS;
  await run.rows(k('chatbot_settings').insert({ shop_id: input.shopId, installed_at: new Date(installedMs), outcomes_measured_since: measuredMs === null ? null : new Date(measuredMs) }));
  const products = await run.rows<ShopData['products'][number]>(k('products').where({ shop_id: input.shopId, active: true }).orderBy('code').select('code', 'name', 'category_guid'));
  const orders = await run.rows<{ code: string; created_at: Date }>(k('orders').where({ shop_id: input.shopId }).where('created_at', '>=', new Date(installedMs - 14 * DAY_MS))
    .orderBy(['created_at', 'code']).select('code', 'created_at'));
  if (!products.length) return;
  const data: ShopData = { base: input.shop.baseUrl.replace(/\/+$/, ''), products, orders };

  const daily: Record<string, unknown>[] = [];
  const conversations: Array<{ row: Record<string, unknown>; messages: Array<Record<string, unknown>> }> = [];
  for (let day = installedMs; day < endMs; day += DAY_MS) {
    const rng = createRandom(input.shopSeed, 'chatbot-day', input.shop.code, day / DAY_MS);
    const shown = rng.int(250, 700);
    const opened = Math.round(shown * rng.float(0.04, 0.1));
    let started = Math.round(opened * rng.float(0.4, 0.7));
    const startedList: number[] = [];
    for (let i = 0; i < started; i++) {
      const at = day + rng.int(7 * 60, 23 * 60) * MINUTE_MS;
      if (at <= endMs) startedList.push(at);
    }
    started = startedList.length;
    daily.push({ shop_id: input.shopId, day: new Date(day).toISOString().slice(0, 10), bubble_shown: shown, bubble_opened: opened, conversations_started: started });
    startedList.sort((a, b) => a - b).forEach((at, i) => {
      const c = createRandom(input.shopSeed, 'chatbot-conversation', input.shop.code, day / DAY_MS, i);
      const topic = c.weighted(CHATBOT_TOPICS, TOPIC_WEIGHTS);
      const p = plan(c, topic, data, at);
      const turns: Array<[string, string, Source[]]> = [['shopper', p.question, []], ['bot', p.answer, p.sources]];
      if (p.follow) turns.push(['shopper', p.follow[0], []], ['bot', p.follow[1], p.sources]);
      let t = at;
      const messages = turns.map(([role, text, sources], position) => {
        t += (position === 0 ? 0 : c.int(5, 90) * 1000);
        return { position, sent_at: new Date(t), role, text, sources: JSON.stringify(role === 'bot' ? sources : []) };
      });
      const measured = measuredMs !== null && at >= measuredMs;
      let outcome: string | null = null;
      if (measured) {
        const r = c.next();
        outcome = p.gap ? (r < 0.7 ? 'unresolved' : r < 0.85 ? 'bot_error' : 'unknown') : (r < 0.75 ? 'resolved' : r < 0.85 ? 'unresolved' : r < 0.88 ? 'bot_error' : 'unknown');
      }
      const rating = c.chance(0.3) ? (p.gap ? c.pick([1, 1, 2, 3]) : c.pick([3, 4, 5, 5, 5])) : null;
      conversations.push({
        row: {
          shop_id: input.shopId, session_id: c.uuid(), started_at: new Date(at), last_activity_at: new Date(t), start_page_url: p.pageUrl, start_page_type: p.pageType,
          language: input.shop.language, first_question: p.question, topic, product_codes: p.productCodes, outcome, rating, messages: messages.length,
        },
        messages,
      });
    });
  }
  await run.rows(k('chatbot_daily').insert(daily));
  for (let i = 0; i < conversations.length; i += 1000) {
    const chunk = conversations.slice(i, i + 1000);
    const ids = await run.rows<{ id: string; session_id: string }>(k('chatbot_conversations').insert(chunk.map((c) => c.row)).returning(['id', 'session_id']));
    const idOf = new Map(ids.map((r) => [r.session_id, r.id]));
    const rows = chunk.flatMap((c) => c.messages.map((m) => ({ ...m, conversation_id: idOf.get(c.row.session_id as string) })));
    for (let j = 0; j < rows.length; j += 2000) await run.rows(k('chatbot_messages').insert(rows.slice(j, j + 2000)));
  }
}
