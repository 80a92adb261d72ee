import { compressDeterministic } from '../compression.js';
import type { AddResult } from '../memory-types.js';
import { cleanModelText, unusableModelText } from '../model-text.js';
import { toEpochMs } from '../options.js';
import type { Policy } from '../policy.js';
import { keywords } from '../text/keywords.js';
import { hasCjk } from '../text/tokenize.js';
import type { Scope } from '../types.js';
import { excerpt } from '../well-formed.js';
import { askModel, type PipelineContext } from './context.js';
import type { ConversationMessage } from './conversation.js';
import type { DecisionSource } from './reports.js';
import { withoutSmallTalk } from './extraction-fallback.js';
import { planSessionSummary, type SessionPlan } from './session-plan.js';

export interface SummarizeSessionOptions {
  /** Where the episode is written. */
  scope?: Scope;
  /** The model's context window in tokens; enables the token threshold and the emergency cut. */
  contextWindowTokens?: number;
  /** Token counter for one message's text. @default estimateTokens */
  countTokens?: (text: string) => number;
  /**
   * Stops the summary, throwing the signal's reason: the model call is
   * aborted in flight, and no episode is written after an abort.
   */
  signal?: AbortSignal;
}

/** What `summarizeSession` did. */
export interface SessionSummaryResult {
  /** `summarized`: older messages became an episode; `emergency`: the oldest half was dropped (and kept as an episode). */
  action: 'none' | 'summarized' | 'emergency';
  reason: string;
  /** The session to continue with: the summary message, when one was made, then the kept messages. */
  messages: ConversationMessage[];
  /** The message standing for what left the session (role `system`; re-role it if your model wants). */
  summaryMessage?: ConversationMessage;
  /** The episode written through the strategy engine (it may have merged into an earlier episode). */
  episode?: AddResult;
  /** Messages that left the session. */
  summarizedCount: number;
  /** Who wrote the summary. */
  source?: DecisionSource;
  modelFallback?: string;
  plan: SessionPlan;
}

/** Prefix of the summary message's id; the rest is the episode's id. */
export const SUMMARY_MESSAGE_ID_PREFIX = 'memloom-summary:';

/** Turn a session's older messages into an episode when the plan says so. */
export async function runSessionSummary(
  context: PipelineContext,
  policy: Policy,
  messages: readonly ConversationMessage[],
  options: SummarizeSessionOptions,
): Promise<SessionSummaryResult> {
  context.signal?.throwIfAborted();
  const plan = planSessionSummary(messages, {
    policy,
    emergencyPercent: context.config.emergencyContextPercent,
    ...(options.contextWindowTokens !== undefined ? { contextWindowTokens: options.contextWindowTokens } : {}),
    ...(options.countTokens ? { countTokens: options.countTokens } : {}),
  });
  if (plan.action === 'none') return { action: 'none', reason: plan.reason, messages: [...messages], summarizedCount: 0, plan };

  const nowMs = context.clock.now();
  let summary = summarizeMessagesDeterministic(plan.older);
  let source: DecisionSource = 'fallback';
  let modelFallback: string | undefined;
  // In an emergency the context is nearly full: no model call, the deterministic summary at once.
  if (plan.action === 'summarize' && context.model) {
    const answer = await askModel(
      context,
      context.prompts.summarizeSession({ messages: plan.older.map(({ role, content }) => ({ role, content })), now: new Date(nowMs).toISOString() }),
    );
    // The roles are part of what the model read: "The user asked…" shares "user" with it.
    const read = plan.older.map((message) => `${message.role}: ${message.content}`);
    const text = answer.ok ? cleanModelText(answer.text, read) : '';
    const room = context.memory.config.limits.maxContentLength - 20;
    const unusable = text === '' || text.length > room ? undefined : unusableModelText(text, read);
    if (!answer.ok) modelFallback = answer.reason;
    else if (text === '') modelFallback = 'the model answered with empty text';
    else if (text.length > room) modelFallback = `the summary exceeded ${room} characters`;
    else if (unusable) modelFallback = unusable;
    else {
      summary = text;
      source = 'model';
    }
    if (modelFallback) context.logger.warn?.('session summary: model answer not used', { reason: modelFallback });
  }

  const startedAt = timeOf(plan.older[0]?.at) ?? nowMs;
  const episode = await context.memory.add(`[${formatMinute(startedAt)}] ${summary}`, {
    ...(options.scope ? { scope: options.scope } : {}),
    category: 'episode',
    source: 'background_ai',
    verified: false,
    sources: plan.older.flatMap((message) => (message.id !== undefined ? [message.id] : [])),
    trigger: 'extraction',
    at: nowMs,
    ...(context.signal ? { signal: context.signal } : {}),
  });
  const lead = plan.action === 'emergency' ? EMERGENCY_LEAD : SUMMARY_LEAD;
  const summaryMessage: ConversationMessage = { role: 'system', content: `${lead}${summary}`, id: `${SUMMARY_MESSAGE_ID_PREFIX}${episode.memory.id}`, at: nowMs };
  return {
    action: plan.action === 'emergency' ? 'emergency' : 'summarized',
    reason: plan.reason,
    messages: [summaryMessage, ...plan.kept],
    summaryMessage,
    episode,
    summarizedCount: plan.older.length,
    source,
    ...(modelFallback ? { modelFallback } : {}),
    plan,
  };
}

const SUMMARY_LEAD = 'Summary of the earlier conversation: ';
const EMERGENCY_LEAD = 'Earlier messages were dropped to free the context. What they said: ';
const TOPICS = { en: 'Talked about ', zh: '聊了' };
const SAID = { en: 'The user said: ', zh: '用户说：' };
/** The words this module frames summaries with: not topics when a summary is summarized again (a rolling summary). */
const FRAMING = [SUMMARY_LEAD, EMERGENCY_LEAD, TOPICS.en, TOPICS.zh, SAID.en, SAID.zh];

function withoutFraming(text: string): string {
  let rest = text;
  for (const phrase of FRAMING) rest = rest.split(phrase).join(' ');
  return rest;
}

/**
 * A summary without a model, in the conversation's language: the topics
 * (keywords) and the first few user messages (long ones cut to a summary), e.g.
 * "Talked about interview, Friday. The user said: I have an interview on Friday".
 */
export function summarizeMessagesDeterministic(messages: readonly ConversationMessage[]): string {
  const all = messages.map((message) => withoutFraming(message.content)).join('\n');
  const chinese = hasCjk(all);
  // Small talk ("你好！", "Thanks!", "好的。") is neither a topic nor what the user said.
  const meant = messages.filter((message) => withoutSmallTalk(message.content) !== '');
  const topics = keywords(meant.map((message) => withoutSmallTalk(withoutFraming(message.content))).join('\n'), 6);
  const said = meant
    .filter((message) => message.role === 'user')
    .slice(0, 3)
    .map((message) => {
      const text = message.content.replace(/\s+/g, ' ').trim();
      return text.length <= 160 ? text : compressDeterministic(text, 'summary');
    });
  const parts = chinese
    ? [
        topics.length > 0 ? `${TOPICS.zh}${topics.join('、')}` : `共${messages.length}条消息`,
        // Each message's own 。！？ left off, so they join as "A；B" (not "A。；B"), the whole ending with one 。.
        said.length > 0 ? `${SAID.zh}${said.map((text) => text.replace(/[。！？!?.]+$/u, '')).join('；')}。` : '',
      ]
    : [topics.length > 0 ? `${TOPICS.en}${topics.join(', ')}.` : `${messages.length} messages.`, said.length > 0 ? `${SAID.en}${said.join(' / ')}` : ''];
  const text = parts.filter(Boolean).join(chinese ? '。' : ' ');
  return text.length > 1000 ? excerpt(text, 999) : text;
}

/** "2024-03-01 09:00" (UTC), seed 002's episode stamp. */
function formatMinute(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}

/** A message's time as `add` reads one (toEpochMs); one it refuses (unreadable, beyond a Date, off the calendar) is left out like a missing one. */
function timeOf(at: ConversationMessage['at']): number | undefined {
  if (at === undefined) return undefined;
  try {
    return toEpochMs(at);
  } catch {
    return undefined;
  }
}
