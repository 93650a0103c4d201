/** Reads of the web chatbot of one shop: conversations with transcripts, and period figures computed in SQL. */
import type { Db } from '../db/knex.js';
import type { Period } from '../capabilities/period.js';
import type { PageRequest } from '../capabilities/types.js';
import { keysetPage, toPage, wherePeriod } from './keyset.js';

export const CHATBOT_OUTCOMES = ['resolved', 'unresolved', 'bot_error', 'unknown'] as const;

const inPeriod = (column: string) => `${column} >= (?::date)::timestamp at time zone ? and ${column} < ((?::date) + 1)::timestamp at time zone ?`;
const periodBindings = (p: Period) => [p.from, p.timeZone, p.to, p.timeZone];
const ratio = (num: number, den: number): number | null => (den > 0 ? Number((num / den).toFixed(4)) : null);

function toConversation(r: Record<string, any>) {
  return {
    sessionId: r.session_id,
    startedAt: r.started_at.toISOString(),
    lastActivityAt: r.last_activity_at.toISOString(),
    firstQuestion: r.first_question,
    startPage: { url: r.start_page_url, type: r.start_page_type },
    language: r.language,
    topic: r.topic,
    productCodes: r.product_codes as string[],
    messages: r.messages,
    outcome: r.outcome as (typeof CHATBOT_OUTCOMES)[number] | null,
    rating: r.rating,
  };
}

const conversationColumns = ['id', 'session_id', 'started_at', 'last_activity_at', 'first_question', 'start_page_url', 'start_page_type', 'language', 'topic', 'product_codes', 'messages', 'outcome', 'rating'];

/** A page of a shop's conversations, most recently active first. */
export async function listConversations(db: Db, shopId: string, period: Period | null, page: PageRequest) {
  const q = db('chatbot_conversations').select(conversationColumns).where({ shop_id: shopId });
  wherePeriod(q, 'last_activity_at', period);
  const rows = await keysetPage(q, 'last_activity_at', 'id', page);
  const result = toPage(rows as Array<Record<string, any> & { id: string }>, page, (r) => r.last_activity_at, toConversation);
  return { items: result.items, hasMore: result.hasMore, last: result.last };
}

/** One conversation of a shop with its whole transcript and the sources of every bot answer, or null. */
export async function getConversation(db: Db, shopId: string, sessionId: string) {
  const row = await db('chatbot_conversations').select(conversationColumns).where({ shop_id: shopId, session_id: sessionId }).first();
  if (!row) return null;
  const messages = await db('chatbot_messages').where({ conversation_id: row.id }).orderBy('position').select('position', 'sent_at', 'role', 'text', 'sources');
  return {
    ...toConversation(row),
    transcript: messages.map((m) => ({ position: m.position, sentAt: m.sent_at.toISOString(), role: m.role, text: m.text, sources: m.sources })),
  };
}

/** How the shop's conversations of a period ended; the resolution rate is N/A with a reason when its denominator is zero. */
export async function chatbotOutcomes(db: Db, shopId: string, period: Period) {
  const settings = await db('chatbot_settings').where({ shop_id: shopId }).first('outcomes_measured_since');
  const r = (await db.raw(`
    select count(*)::int as total,
      count(outcome)::int as measured,
      count(*) filter (where outcome = 'resolved')::int as resolved,
      count(*) filter (where outcome = 'unresolved')::int as unresolved,
      count(*) filter (where outcome = 'bot_error')::int as bot_error,
      count(*) filter (where outcome = 'unknown')::int as unknown
    from chatbot_conversations where shop_id = ? and ${inPeriod('started_at')}`, [shopId, ...periodBindings(period)])).rows[0];
  const known = r.resolved + r.unresolved + r.bot_error;
  const since: Date | null = settings?.outcomes_measured_since ?? null;
  let reason: string | null = null;
  if (known === 0) {
    if (!since) reason = 'Outcomes are not measured in this shop yet, so there is no rate to give.';
    else if (r.total === 0) reason = 'No conversation started in the period.';
    else if (r.measured === 0) reason = `No conversation of the period was measured: measurement started at ${since.toISOString()}.`;
    else reason = 'No measured conversation of the period has a known outcome (all are unknown).';
  }
  return {
    measuredSince: since ? since.toISOString() : null,
    conversations: r.total,
    measured: r.measured,
    unmeasured: r.total - r.measured,
    knownOutcome: known,
    unknownOutcome: r.unknown,
    resolved: r.resolved,
    unresolved: r.unresolved,
    botError: r.bot_error,
    resolutionRate: {
      value: known > 0 ? ratio(r.resolved, known) : null,
      display: known > 0 ? `${(Math.round((r.resolved / known) * 1000) / 10).toFixed(1)} %` : 'N/A',
      numerator: r.resolved,
      denominator: known,
      notApplicableReason: reason,
    },
  };
}

/** Period statistics of a shop's chatbot: bubble funnel, conversations, messages, outcomes and ratings. */
export async function chatbotStats(db: Db, shopId: string, period: Period) {
  const funnel = (await db.raw(`
    select coalesce(sum(bubble_shown), 0)::int as shown, coalesce(sum(bubble_opened), 0)::int as opened, coalesce(sum(conversations_started), 0)::int as started
    from chatbot_daily where shop_id = ? and day between ?::date and ?::date`, [shopId, period.from, period.to])).rows[0];
  const c = (await db.raw(`
    select count(*)::int as conversations, coalesce(sum(messages), 0)::int as messages,
      count(*) filter (where outcome = 'resolved')::int as resolved, count(*) filter (where outcome = 'unresolved')::int as unresolved,
      count(*) filter (where outcome = 'bot_error')::int as bot_error, count(*) filter (where outcome = 'unknown')::int as unknown,
      count(*) filter (where outcome is null)::int as unmeasured,
      count(rating)::int as rated, round(avg(rating), 2)::text as average_rating,
      ${[1, 2, 3, 4, 5].map((n) => `count(*) filter (where rating = ${n})::int as r${n}`).join(', ')}
    from chatbot_conversations where shop_id = ? and ${inPeriod('started_at')}`, [shopId, ...periodBindings(period)])).rows[0];
  return {
    bubble: {
      shown: funnel.shown, opened: funnel.opened, conversationsStarted: funnel.started,
      openRate: ratio(funnel.opened, funnel.shown), startRate: ratio(funnel.started, funnel.opened),
    },
    conversations: { total: c.conversations, messages: c.messages, averageMessages: c.conversations > 0 ? Number((c.messages / c.conversations).toFixed(2)) : null },
    outcomes: { resolved: c.resolved, unresolved: c.unresolved, botError: c.bot_error, unknown: c.unknown, unmeasured: c.unmeasured },
    ratings: {
      count: c.rated, average: c.average_rating === null ? null : Number(c.average_rating),
      distribution: { 1: c.r1, 2: c.r2, 3: c.r3, 4: c.r4, 5: c.r5 },
    },
  };
}

/** Topic shares with their products, start-page types, and knowledge-gap candidates of a shop's period. */
export async function chatbotTopics(db: Db, shopId: string, period: Period) {
  const pb = [shopId, ...periodBindings(period)];
  const base = `select * from chatbot_conversations where shop_id = ? and ${inPeriod('started_at')}`;
  const topics: Array<Record<string, any>> = (await db.raw(`
    with c as (${base})
    select topic, count(*)::int as conversations, count(*) filter (where outcome = 'resolved')::int as resolved,
      count(*) filter (where outcome in ('unresolved', 'bot_error'))::int as not_resolved
    from c group by topic order by conversations desc, topic`, pb)).rows;
  const products: Array<Record<string, any>> = (await db.raw(`
    with c as (${base})
    select c.topic, pc.code, p.name, count(*)::int as conversations,
      row_number() over (partition by c.topic order by count(*) desc, pc.code) as rank
    from c cross join unnest(c.product_codes) as pc(code)
    left join products p on p.shop_id = c.shop_id and p.code = pc.code
    group by c.topic, pc.code, p.name`, pb)).rows;
  const pages: Array<Record<string, any>> = (await db.raw(`
    with c as (${base}) select start_page_type as type, count(*)::int as conversations from c group by 1 order by 2 desc, 1`, pb)).rows;
  const gaps: Array<Record<string, any>> = (await db.raw(`
    with c as (${base})
    select c.topic, c.first_question, count(*)::int as conversations,
      count(*) filter (where c.outcome = 'unresolved')::int as unresolved, count(*) filter (where c.outcome = 'bot_error')::int as bot_error,
      count(*) filter (where not exists (select 1 from chatbot_messages m where m.conversation_id = c.id and m.role = 'bot' and jsonb_array_length(m.sources) > 0))::int as without_sources,
      max(c.started_at) as last_asked_at
    from c
    where c.outcome in ('unresolved', 'bot_error')
       or not exists (select 1 from chatbot_messages m where m.conversation_id = c.id and m.role = 'bot' and jsonb_array_length(m.sources) > 0)
    group by c.topic, c.first_question
    order by conversations desc, c.topic, c.first_question
    limit 20`, pb)).rows;
  const total = topics.reduce((a, t) => a + t.conversations, 0);
  return {
    conversations: total,
    topics: topics.map((t) => ({
      topic: t.topic, conversations: t.conversations, share: ratio(t.conversations, total), resolved: t.resolved, notResolved: t.not_resolved,
      products: products.filter((p) => p.topic === t.topic && Number(p.rank) <= 5)
        .sort((a, b) => Number(a.rank) - Number(b.rank)).map((p) => ({ productCode: p.code, name: p.name, conversations: p.conversations })),
    })),
    startPages: pages.map((p) => ({ type: p.type, conversations: p.conversations, share: ratio(p.conversations, total) })),
    knowledgeGapCandidates: gaps.map((g) => ({
      topic: g.topic, question: g.first_question, conversations: g.conversations, unresolved: g.unresolved, botError: g.bot_error,
      answersWithoutSources: g.without_sources, lastAskedAt: g.last_asked_at.toISOString(),
    })),
  };
}
