import type { Policy } from '../policy.js';
import { estimateTokens, type ConversationMessage } from './conversation.js';

export interface SessionPlanOptions {
  /** Seed 001's thresholds: `session_summary_message_threshold`, `session_summary_token_percent`, `session_summary_keep_count`. */
  policy: Pick<Policy, 'session_summary_message_threshold' | 'session_summary_token_percent' | 'session_summary_keep_count'>;
  /** The model's context window in tokens. Without it only the message threshold applies. */
  contextWindowTokens?: number;
  /** Context use (percent) at which the oldest half is dropped at once. @default 95 */
  emergencyPercent?: number;
  /** Token counter for one message's text. @default estimateTokens */
  countTokens?: (text: string) => number;
}

/** What to do with a session's messages, decided without touching them. */
export interface SessionPlan {
  /** `summarize`: older messages become an episode; `emergency`: the oldest half is dropped now. */
  action: 'none' | 'summarize' | 'emergency';
  reason: string;
  messageCount: number;
  tokens: number;
  /** Percent of the context window in use, when the window is known. */
  contextPercent?: number;
  /** The messages that leave the session (summarized or dropped), oldest first. */
  older: ConversationMessage[];
  /** The messages that stay, verbatim. */
  kept: ConversationMessage[];
}

/**
 * Seeds 001/002: past `session_summary_message_threshold` messages, or past
 * `session_summary_token_percent` of the context window, everything but the
 * last `session_summary_keep_count` messages is summarized; at
 * `emergencyPercent` of the window the oldest half is dropped instead (no
 * model call: the context is nearly full). Pure.
 */
export function planSessionSummary(messages: readonly ConversationMessage[], options: SessionPlanOptions): SessionPlan {
  const count = options.countTokens ?? estimateTokens;
  const tokens = messages.reduce((sum, message) => sum + count(message.content), 0);
  const window = options.contextWindowTokens;
  const contextPercent = window !== undefined && window > 0 ? (tokens / window) * 100 : undefined;
  const base = { messageCount: messages.length, tokens, ...(contextPercent !== undefined ? { contextPercent } : {}) };
  const { policy } = options;

  if (contextPercent !== undefined && contextPercent >= (options.emergencyPercent ?? 95) && messages.length >= 2) {
    const { kept, dropped } = forceCompression(messages);
    return { ...base, action: 'emergency', reason: `context ${round(contextPercent)}% full: dropping the oldest half`, older: dropped, kept };
  }
  const overMessages = messages.length > policy.session_summary_message_threshold;
  const overTokens = contextPercent !== undefined && contextPercent > policy.session_summary_token_percent;
  // The kept part must not start with tool results whose call would be summarized away: keep the call too.
  let cut = messages.length - Math.min(policy.session_summary_keep_count, messages.length);
  while (cut > 0 && messages[cut]?.role === 'tool') cut--;
  const keep = messages.length - cut;
  const older = messages.slice(0, cut);
  if (!overMessages && !overTokens) {
    return { ...base, action: 'none', reason: 'under the message and token thresholds', older: [], kept: [...messages] };
  }
  if (older.length === 0) {
    return { ...base, action: 'none', reason: `nothing older than the last ${keep} messages to summarize`, older: [], kept: [...messages] };
  }
  const reason = overMessages
    ? `${messages.length} messages > session_summary_message_threshold ${policy.session_summary_message_threshold}`
    : `context ${round(contextPercent ?? 0)}% > session_summary_token_percent ${policy.session_summary_token_percent}`;
  return { ...base, action: 'summarize', reason, older, kept: messages.slice(cut) };
}

/**
 * Seed 001's `forceCompression`: drop the oldest half of the messages (rounded
 * down), keep the rest; tool results at the cut are dropped with the call they
 * answer, so the kept part never starts with an orphaned tool result. Pure.
 */
export function forceCompression(messages: readonly ConversationMessage[]): { kept: ConversationMessage[]; dropped: ConversationMessage[] } {
  let cut = Math.floor(messages.length / 2);
  while (cut < messages.length && messages[cut]?.role === 'tool') cut++;
  return { kept: messages.slice(cut), dropped: messages.slice(0, cut) };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
