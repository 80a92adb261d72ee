import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import { hasCjk } from '@memloom/core';
import { messageText } from './messages.js';

/** Counts the tokens of a list of messages. */
export type TokenCounter = (messages: readonly BaseMessage[]) => number | Promise<number>;

/**
 * A rough count without a tokenizer: one token per CJK character, one per
 * four other characters, plus a few per message for the role and framing.
 * Pass your model's own counter where precision matters.
 */
export function approximateTokens(messages: readonly BaseMessage[]): number {
  let total = 0;
  for (const message of messages) {
    total += 4 + textTokens(messageText(message));
    if (AIMessage.isInstance(message) && message.tool_calls?.length) total += textTokens(JSON.stringify(message.tool_calls));
  }
  return total;
}

export function textTokens(text: string): number {
  if (!hasCjk(text)) return Math.ceil(text.length / 4);
  let cjk = 0;
  let other = 0;
  for (const character of text) {
    if (hasCjk(character)) cjk++;
    else other++;
  }
  return cjk + Math.ceil(other / 4);
}

/** The context window of a chat model, from its profile when it declares one. */
export function contextWindowOf(model: unknown): number | undefined {
  const profile = (model as { profile?: { maxInputTokens?: unknown } } | undefined)?.profile;
  const tokens = profile?.maxInputTokens;
  return typeof tokens === 'number' && tokens > 0 ? tokens : undefined;
}
