import type { MemoryMessage } from '@llamaindex/core/memory';
import { MemloomError, type LanguageModel, type Memory, type Scope } from '@memloom/core';
import { isToolResult, messageText } from './messages.js';

/** Roles whose messages the deterministic path records. */
export type RecordedRole = 'user' | 'assistant';

export interface RecordOptions {
  scope: Scope;
  /** Deterministic path: the roles recorded verbatim. */
  roles: readonly RecordedRole[];
  /**
   * The LlamaIndex LLM as a memloom LanguageModel, for fact extraction.
   * Not used yet: the extraction pipeline (issue 6) is not in core; until it
   * is, every flush takes the deterministic path.
   */
  languageModel?: LanguageModel | undefined;
}

export interface RecordOutcome {
  /** Ids of messages done with: recorded, or deliberately not recorded. Never sent again. */
  done: string[];
  /** Messages left when the store (or embedder) failed, from the failing one on, to try again later. */
  remaining: MemoryMessage[];
  /** Why recording stopped, when `remaining` is not empty. */
  error?: unknown;
  /** Messages of a recorded role that could not be recorded (no text, too long, rejected), with the reason. */
  skipped: { id: string | undefined; reason: string }[];
}

/** Codes that mean "this message cannot be recorded": retrying would fail the same way. */
const CONTENT_ERRORS = new Set(['EMPTY_CONTENT', 'CONTENT_TOO_LONG', 'INVALID_INPUT']);

/**
 * Feed messages flushed out of LlamaIndex's short-term memory into memloom's
 * strategy engine. This is the one place the flush is turned into memories.
 *
 * Deterministic path (today, with or without a model): each message of a
 * recorded role is added as it was said, with trigger `extraction` and its
 * message id as provenance; the engine merges a restated fact into the memory
 * it repeats, keeps a related one beside it, or creates a new memory.
 */
export async function recordMessages(memory: Memory, messages: readonly MemoryMessage[], options: RecordOptions): Promise<RecordOutcome> {
  const outcome: RecordOutcome = { done: [], remaining: [], skipped: [] };
  const maxLength = memory.config.limits.maxContentLength;
  for (const [index, message] of messages.entries()) {
    const id = typeof message.id === 'string' ? message.id : undefined;
    const skip = (reason: string) => {
      outcome.skipped.push({ id, reason });
      if (id) outcome.done.push(id);
    };
    if (!(options.roles as readonly string[]).includes(message.role) || isToolResult(message)) {
      if (id) outcome.done.push(id);
      continue;
    }
    const text = messageText(message);
    if (text === '') {
      skip('no text');
      continue;
    }
    if (text.length > maxLength) {
      skip(`${text.length} characters, over limits.maxContentLength (${maxLength})`);
      continue;
    }
    try {
      await memory.add(text, {
        scope: options.scope,
        trigger: 'extraction',
        source: message.role === 'user' ? 'user' : 'background_ai',
        ...(id ? { sources: [id] } : {}),
      });
      if (id) outcome.done.push(id);
    } catch (error) {
      if (MemloomError.isInstance(error) && CONTENT_ERRORS.has(error.code)) {
        skip(error.message);
        continue;
      }
      outcome.remaining = messages.slice(index);
      outcome.error = error;
      break;
    }
  }
  return outcome;
}
