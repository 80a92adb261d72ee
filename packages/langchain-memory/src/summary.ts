import { HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { keywords, type AddResult, type Memory, type Scope } from '@memloom/core';
import { isSummaryMessage, isUserMessage, messageText, SUMMARY_SOURCE } from './messages.js';

/** Tag on the episode memories made from summarized conversation (seed 002's episodic layer). */
export const SESSION_SUMMARY_TAG = 'session-summary';

/** Longest summary kept, in characters (well under core's content limit). */
const SUMMARY_CHARS = 2000;
/** Longest quote of one user message in a summary. */
const QUOTE_CHARS = 160;

/**
 * Summarize messages that are about to leave the conversation, folding in the
 * summary they may already start with.
 *
 * This is the deterministic summary, and the one place a conversation is
 * summarized: a dated line of what was talked about (keywords), then what the
 * user said, newest kept first when space runs out, then what the earlier
 * summary said. Seed 002's example: "[2026-01-03 18:00] Talked about:
 * interview, games".
 */
export async function summarizeMessages(memory: Memory, messages: readonly BaseMessage[]): Promise<string> {
  const previous = messages.filter(isSummaryMessage).map((message) => stripSummaryPrefix(messageText(message)));
  const fresh = messages.filter((message) => !isSummaryMessage(message));
  const stamp = new Date(memory.clock.now()).toISOString().slice(0, 16).replace('T', ' ');
  const topics = keywords(fresh.map(messageText).join('\n'), 6);
  const head = `[${stamp}] ${fresh.length} messages. ${topics.length > 0 ? `Talked about: ${topics.join(', ')}.` : ''}`.trim();
  const quotes = fresh
    .filter(isUserMessage)
    .map((message) => quote(messageText(message)))
    .filter(Boolean);
  const limit = Math.min(SUMMARY_CHARS, memory.config.limits.maxContentLength);
  let lines = [head, ...(quotes.length > 0 ? ['The user said:', ...quotes.map((text) => `- ${text}`)] : [])];
  // Drop the oldest quotes first when the summary grows too long.
  while (lines.join('\n').length > limit && lines.length > 3) lines = [lines[0] as string, lines[1] as string, ...lines.slice(3)];
  let summary = lines.join('\n');
  for (const earlier of previous) {
    const room = limit - summary.length - '\nEarlier: '.length;
    if (room > 40) summary += `\nEarlier: ${earlier.length > room ? `${earlier.slice(0, room - 1)}…` : earlier}`;
  }
  return summary.slice(0, limit);
}

/** Keep a summary as an episode memory of the session, through the strategy engine. */
export function recordSummary(memory: Memory, summary: string, scope: Scope, messages: readonly BaseMessage[]): Promise<AddResult> {
  const sources = messages.map((message) => message.id).filter((id): id is string => typeof id === 'string' && id !== '');
  return memory.add(summary, {
    scope,
    category: 'episode',
    source: 'background_ai',
    trigger: 'extraction',
    tags: [SESSION_SUMMARY_TAG],
    ...(sources.length > 0 ? { sources: sources.slice(0, 200) } : {}),
  });
}

const SUMMARY_PREFIX = 'Summary of the earlier conversation (older messages were replaced by it):';

/** The message that stands in the conversation for the summarized messages. */
export function summaryMessage(summary: string, id?: string): HumanMessage {
  return new HumanMessage({
    content: `${SUMMARY_PREFIX}\n\n${summary}`,
    ...(id ? { id } : {}),
    additional_kwargs: { lc_source: SUMMARY_SOURCE },
  });
}

function stripSummaryPrefix(text: string): string {
  return (text.startsWith(SUMMARY_PREFIX) ? text.slice(SUMMARY_PREFIX.length) : text).replace(/\s+/g, ' ').trim();
}

function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > QUOTE_CHARS ? `${flat.slice(0, QUOTE_CHARS - 1)}…` : flat;
}
