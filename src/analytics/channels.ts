/**
 * Marketing channels as the service reports them: web analytics' own channel, except that a visit referred by an AI
 * assistant (ChatGPT, Perplexity, Gemini, Claude, Copilot...) is recognised by its referrer host and reported as
 * channel `ai_assistant` with the assistant as source — analytics tools file these under plain referrals.
 */

/** Referrer hosts of AI assistants (without `www.`), and the source name reported for each. */
export const AI_ASSISTANT_REFERRERS: Readonly<Record<string, string>> = {
  'chatgpt.com': 'chatgpt', 'chat.openai.com': 'chatgpt', 'perplexity.ai': 'perplexity', 'gemini.google.com': 'gemini',
  'bard.google.com': 'gemini', 'claude.ai': 'claude', 'copilot.microsoft.com': 'copilot', 'copilot.cloud.microsoft': 'copilot',
  'you.com': 'you', 'chat.mistral.ai': 'mistral', 'chat.deepseek.com': 'deepseek', 'meta.ai': 'meta_ai', 'grok.com': 'grok',
};

export const AI_CHANNEL = 'ai_assistant';

/** The channel and source the service reports for a visit or a tracked order. */
export function classifyTraffic(channel: string, source: string, referrer: string | null): { channel: string; source: string } {
  const host = referrer?.trim().toLowerCase().replace(/^www\./, '');
  const assistant = host ? AI_ASSISTANT_REFERRERS[host] : undefined;
  return assistant ? { channel: AI_CHANNEL, source: assistant } : { channel, source };
}
