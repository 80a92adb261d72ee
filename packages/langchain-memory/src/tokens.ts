import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import { estimateTokens } from '@memloom/core';
import { messageText } from './messages.js';

/** Counts the tokens of one message's text (the pipeline's form). */
export type TokenCounter = (text: string) => number;

/**
 * Tokens of a list of messages: each message's text, its tool calls, and a
 * few tokens of framing. Counts text with `countText` (default: core's
 * `estimateTokens`, one token per CJK character and per four other characters).
 */
export function countMessageTokens(messages: readonly BaseMessage[], countText: TokenCounter = estimateTokens): number {
  let total = 0;
  for (const message of messages) {
    total += 4 + countText(messageText(message));
    if (AIMessage.isInstance(message) && message.tool_calls?.length) total += countText(JSON.stringify(message.tool_calls));
  }
  return total;
}

/** The context window of a chat model, from its profile when it declares one. */
export function contextWindowOf(model: unknown): number | undefined {
  const profile = (model as { profile?: { maxInputTokens?: unknown } } | undefined)?.profile;
  const tokens = profile?.maxInputTokens;
  return typeof tokens === 'number' && tokens > 0 ? tokens : undefined;
}
