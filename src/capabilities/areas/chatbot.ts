/** The web chatbot the service runs on a shop's pages: conversations with transcripts, outcomes, period statistics, topics. */
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { CHATBOT_TOPICS, START_PAGE_TYPES } from '../../chatbot/topics.js';
import { CHATBOT_OUTCOMES, chatbotOutcomes, chatbotStats, chatbotTopics, getConversation, listConversations } from '../../queries/chatbot.js';
import { from, listParams, market, to } from '../params.js';
import { defineCapability, readOnly } from '../types.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds.');
const rate = z.number().min(0).max(1).nullable();
const periodParams = z.object({ market, from: from.optional(), to: to.optional() }).strict();

const conversationSchema = z.object({
  sessionId: z.string().describe('The chat session; use it with /chatbot/conversations/{sessionId}.'),
  startedAt: timestamp,
  lastActivityAt: timestamp,
  firstQuestion: z.string().describe('The shopper\'s first message.'),
  startPage: z.object({ url: z.string(), type: z.enum(START_PAGE_TYPES) }).describe('The page the chat was opened on.'),
  language: z.string(),
  topic: z.enum(CHATBOT_TOPICS),
  productCodes: z.array(z.string()).describe('Catalogue products the conversation is about.'),
  messages: z.number().int(),
  outcome: z.enum(CHATBOT_OUTCOMES).nullable().describe('resolved, unresolved, bot_error or unknown; null when the conversation predates outcome measurement.'),
  rating: z.number().int().min(1).max(5).nullable().describe('The shopper\'s rating 1–5, or null.'),
});

const sourceSchema = z.object({
  type: z.enum(['product', 'category', 'help_article', 'order', 'policy']),
  ref: z.string(), title: z.string(), url: z.string(),
});

/** Lists a shop's chatbot conversations, most recently active first. */
export const chatbotConversations = defineCapability({
  name: 'chatbot.conversations',
  summary: 'Web-chatbot conversations from the last active, with the first question; cursor.',
  description: 'Returns the chatbot conversations of the shop `market`, most recently active first, optionally those active in a period (shop time zone; default all), each with its first question, start page, topic, products, outcome and rating. Paginated by cursor. Transcripts: /chatbot/conversations/{sessionId}.',
  path: '/chatbot/conversations',
  scope: 'chatbot-conversations:read',
  mcpTool: null,
  kind: 'list',
  market: 'required',
  period: { default: 'all' },
  params: z.object({ ...listParams }).strict(),
  result: conversationSchema,
  annotations: readOnly,
  handler: ({ ctx, period, page }) => listConversations(ctx.db, ctx.shop!.id, period, page),
});

/** Reads one conversation's transcript with the sources of the bot's answers. */
export const chatbotConversation = defineCapability({
  name: 'chatbot.conversation',
  summary: 'Transcript of one web-chatbot conversation with the sources of bot answers.',
  description: 'Returns one chatbot conversation of the shop `market` by `sessionId`, with every message in order and, for each bot answer, the sources it was built from (product pages, policies, orders). A conversation of another shop is not found.',
  path: '/chatbot/conversations/{sessionId}',
  scope: 'chatbot-conversations:read',
  mcpTool: null,
  kind: 'get',
  market: 'required',
  params: z.object({ market, sessionId: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'a session id').describe('Session id, as `sessionId` in /chatbot/conversations.') }).strict(),
  result: conversationSchema.extend({
    transcript: z.array(z.object({
      position: z.number().int(), sentAt: timestamp, role: z.enum(['shopper', 'bot']), text: z.string(),
      sources: z.array(sourceSchema).describe('For a bot answer, what it was based on; empty for shoppers\' messages and answers without a source.'),
    })),
  }),
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const conversation = await getConversation(ctx.db, ctx.shop!.id, params.sessionId);
    if (!conversation) throw new AppError('NOT_FOUND', `No chatbot conversation \`${params.sessionId}\` in shop \`${ctx.shop!.code}\`.`, { param: 'sessionId' });
    return conversation;
  },
});

/** Totals of how a shop's conversations of a period ended, with the resolution rate or N/A and its reason. */
export const chatbotOutcomesCapability = defineCapability({
  name: 'chatbot.outcomes',
  summary: 'How conversations ended: measured/unmeasured, known/unknown, resolved, unresolved, bot error, resolution rate or N/A with a reason.',
  description: 'Returns totals for the chatbot conversations of the shop `market` started in a period (default: the last 30 days including today, shop time zone; stated in `meta.period`): since when outcomes are measured, measured and unmeasured conversations, known and unknown outcomes, resolved, unresolved and bot errors, and the resolution rate = resolved / known outcomes with its numerator and denominator. When the denominator is zero the rate is null, `display` is "N/A" and `notApplicableReason` says why; never 0 %.',
  path: '/chatbot/outcomes',
  scope: 'chatbot:read',
  mcpTool: null,
  kind: 'summary',
  market: 'required',
  period: { default: 'last30days' },
  params: periodParams,
  result: z.object({
    measuredSince: timestamp.nullable().describe('When outcome measurement started in this shop; null when it has not.'),
    conversations: z.number().int(),
    measured: z.number().int(), unmeasured: z.number().int().describe('Conversations from before measurement started.'),
    knownOutcome: z.number().int(), unknownOutcome: z.number().int(),
    resolved: z.number().int(), unresolved: z.number().int(), botError: z.number().int(),
    resolutionRate: z.object({
      value: rate.describe('resolved / knownOutcome, 4 decimals; null when knownOutcome is 0.'),
      display: z.string().describe('E.g. "72.4 %", or "N/A".'),
      numerator: z.number().int(), denominator: z.number().int(),
      notApplicableReason: z.string().nullable().describe('Why the rate is N/A; null when it has a value.'),
    }),
  }),
  annotations: readOnly,
  handler: ({ ctx, period }) => chatbotOutcomes(ctx.db, ctx.shop!.id, period!),
});

/** Period statistics of a shop's chatbot. */
export const chatbotStatsCapability = defineCapability({
  name: 'chatbot.stats',
  summary: 'Period statistics: bubble funnel, opens, conversations, outcomes, ratings.',
  description: 'Returns the chatbot statistics of the shop `market` for a period (default: the last 30 days including today; stated in `meta.period`): the bubble funnel (bubble shown, opened, conversation started, with open and start rates), conversations and messages, outcomes (unmeasured counted apart) and ratings (count, average, distribution). For the resolution rate with its denominator use /chatbot/outcomes.',
  path: '/chatbot/stats',
  scope: 'chatbot:read',
  mcpTool: null,
  kind: 'summary',
  market: 'required',
  period: { default: 'last30days' },
  params: periodParams,
  result: z.object({
    bubble: z.object({
      shown: z.number().int(), opened: z.number().int(), conversationsStarted: z.number().int(),
      openRate: rate.describe('opened / shown; null when nothing was shown.'), startRate: rate.describe('started / opened; null when nothing was opened.'),
    }),
    conversations: z.object({ total: z.number().int(), messages: z.number().int(), averageMessages: z.number().nullable() }),
    outcomes: z.object({ resolved: z.number().int(), unresolved: z.number().int(), botError: z.number().int(), unknown: z.number().int(), unmeasured: z.number().int() }),
    ratings: z.object({
      count: z.number().int(), average: z.number().nullable().describe('2 decimals; null without ratings.'),
      distribution: z.object({ 1: z.number().int(), 2: z.number().int(), 3: z.number().int(), 4: z.number().int(), 5: z.number().int() }),
    }),
  }),
  annotations: readOnly,
  handler: ({ ctx, period }) => chatbotStats(ctx.db, ctx.shop!.id, period!),
});

/** What shoppers ask a shop's chatbot: topics with products, start pages, knowledge gaps. */
export const chatbotTopicsCapability = defineCapability({
  name: 'chatbot.topics',
  summary: 'Topic shares, products, start-page type, knowledge-gap candidates.',
  description: 'Returns what shoppers asked the chatbot of the shop `market` in a period (default: the last 30 days including today; stated in `meta.period`): each topic\'s share of conversations with the products most asked about, the share of each start-page type, and knowledge-gap candidates — questions that ended unresolved or in a bot error, or whose answers had no source — most frequent first (at most 20).',
  path: '/chatbot/topics',
  scope: 'chatbot:read',
  mcpTool: null,
  kind: 'summary',
  market: 'required',
  period: { default: 'last30days' },
  params: periodParams,
  result: z.object({
    conversations: z.number().int(),
    topics: z.array(z.object({
      topic: z.enum(CHATBOT_TOPICS), conversations: z.number().int(), share: rate, resolved: z.number().int(), notResolved: z.number().int(),
      products: z.array(z.object({ productCode: z.string(), name: z.string().nullable(), conversations: z.number().int() })).describe('Top 5 products of the topic.'),
    })),
    startPages: z.array(z.object({ type: z.enum(START_PAGE_TYPES), conversations: z.number().int(), share: rate })),
    knowledgeGapCandidates: z.array(z.object({
      topic: z.enum(CHATBOT_TOPICS), question: z.string().optional().describe('The shopper\'s own words. Needs `chatbot-conversations:read`; absent without it.'), conversations: z.number().int(), unresolved: z.number().int(), botError: z.number().int(),
      answersWithoutSources: z.number().int(), lastAskedAt: timestamp,
    })),
  }),
  fieldScopes: { 'knowledgeGapCandidates[].question': 'chatbot-conversations:read' },
  annotations: readOnly,
  handler: ({ ctx, period }) => chatbotTopics(ctx.db, ctx.shop!.id, period!),
});
