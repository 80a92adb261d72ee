import { Settings } from '@llamaindex/core/global';
import type { MessageContent, MessageType } from '@llamaindex/core/llms';
import type { MemoryMessage } from '@llamaindex/core/memory';
import { extractText } from '@llamaindex/core/utils';
import { describeValue, MemloomError } from '@memloom/core';

/** Roles a block may give the message it returns (LlamaIndex's `MessageType`). */
export const MESSAGE_ROLES = ['memory', 'system', 'user', 'assistant', 'developer'] as const satisfies readonly MessageType[];

/**
 * Check what LlamaIndex handed a block: an array of messages, each with a
 * role and text or multi-part content. Throws INVALID_INPUT naming the first
 * bad entry, before anything is read or written.
 */
export function assertMessages(messages: unknown, what: string): asserts messages is MemoryMessage[] {
  if (!Array.isArray(messages)) {
    throw new MemloomError({
      code: 'INVALID_INPUT',
      backend: 'llamaindex',
      message: `${what} expects an array of memory messages, got ${describeValue(messages)}`,
    });
  }
  for (const [index, message] of messages.entries()) {
    const problem = messageProblem(message);
    if (problem) {
      throw new MemloomError({
        code: 'INVALID_INPUT',
        backend: 'llamaindex',
        message: `${what}: message ${index} ${problem}`,
        details: { index },
      });
    }
  }
}

/** The plain text of a message (text parts of multi-part content joined). */
export function messageText(message: { content: MessageContent }): string {
  return extractText(message.content).trim();
}

/** A tool's result travels as a `user` message carrying `options.toolResult`; it is not something the user said. */
export function isToolResult(message: MemoryMessage): boolean {
  const options = message.options as Record<string, unknown> | undefined;
  return typeof options === 'object' && options !== null && 'toolResult' in options;
}

/** An assistant message asking for tools (`options.toolCall`): the model's step, not its reply. */
export function isToolCall(message: MemoryMessage): boolean {
  const options = message.options as Record<string, unknown> | undefined;
  return message.role === 'assistant' && typeof options === 'object' && options !== null && 'toolCall' in options;
}

/** A message the user typed (not a tool result). */
export function isUserTurn(message: MemoryMessage): boolean {
  return message.role === 'user' && !isToolResult(message);
}

/**
 * Make text safe inside a `<tag>…</tag>` fence: without `<` it can neither
 * close the fence nor open a tag of its own. Only `<` is touched, so Markdown
 * (`> quotes`, `&`) reads as written.
 */
export function escapeTags(text: string): string {
  return text.replace(/</g, '&lt;');
}

/** Tokens as LlamaIndex's Memory counts them (its global tokenizer), so budgets agree with its own. */
export function countTokens(text: string): number {
  return text === '' ? 0 : Settings.tokenizer.encode(text).length;
}

function messageProblem(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null) return `is ${describeValue(message)}, not a message`;
  const candidate = message as Record<string, unknown>;
  if (typeof candidate.role !== 'string') return 'has no role';
  const content = candidate.content;
  if (typeof content === 'string') return undefined;
  if (Array.isArray(content) && content.every((part) => typeof part === 'object' && part !== null && typeof (part as { type?: unknown }).type === 'string')) {
    return undefined;
  }
  return 'has content that is neither text nor a list of content parts';
}
