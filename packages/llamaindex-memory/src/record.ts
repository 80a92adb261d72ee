import type { MemoryMessage } from '@llamaindex/core/memory';
import { lastCharacters, MemloomError, type AfterTurnReport, type Memory, type MemoryFilter, type MemoryPipeline, type Scope } from '@memloom/core';
import { isUserTurn, messageText } from './messages.js';

export interface RecordOptions {
  scope: Scope;
  /** The pipeline whose extraction turns each flushed turn into memory operations. */
  pipeline: MemoryPipeline;
  /** How the memories shown to the extraction model (the only ones it may update, boost or delete) are found. */
  retrieval: { limit: number; minScore: number; filter?: MemoryFilter | undefined };
  /**
   * Ids of messages tried before (a store failure part-way): their turns are recorded again even
   * when a memory already names them in its sources. @default none
   */
  retrying?: ReadonlySet<string>;
}

export interface RecordOutcome {
  /** Ids of messages done with: extracted from, or deliberately passed over. Never sent again. */
  done: string[];
  /** Messages left when the store (or embedder) failed, from the failing turn on, to try again later. */
  remaining: MemoryMessage[];
  /** Why recording stopped, when `remaining` is not empty. */
  error?: unknown;
  /** Turns that could not be recorded and will not be retried (no text, rejected content), with the reason. */
  skipped: { id: string | undefined; reason: string }[];
  /** The pipeline's report for each turn it ran on, in order. */
  reports: AfterTurnReport[];
}

/** Why a turn whose memory already names it in `sources` is passed over. */
export const ALREADY_RECORDED = 'already recorded (a memory names the message in its sources)';

/** Codes that mean "this turn cannot be recorded": retrying would fail the same way. */
const CONTENT_ERRORS = new Set(['EMPTY_CONTENT', 'CONTENT_TOO_LONG', 'INVALID_INPUT']);

interface FlushedTurn {
  /** Every message of the turn, the user's first (tool calls and results included). */
  messages: MemoryMessage[];
  user: MemoryMessage | undefined;
}

/**
 * Feed messages flushed out of LlamaIndex's short-term memory to memloom's
 * pipeline. This is the one place the flush is turned into memories.
 *
 * The messages are cut into turns (a user message and what followed it). For
 * each turn the memories relevant to the user's message are retrieved and the
 * pipeline runs its after-turn work: fact extraction (ADD / UPDATE / BOOST /
 * DELETE / SKIP with the model, or the user's first-person statements on the
 * deterministic path; ADD goes through the strategy engine, so a restated fact
 * merges), the promotion reviews it makes due, and, when the policy enables
 * them, long-term compression and evolution. Tool calls and results are not
 * shown to the extraction. A store failure stops at the failing turn and
 * returns the rest for a retry; model failures never surface (the pipeline
 * falls back).
 */
export async function recordMessages(memory: Memory, messages: readonly MemoryMessage[], options: RecordOptions): Promise<RecordOutcome> {
  const outcome: RecordOutcome = { done: [], remaining: [], skipped: [], reports: [] };
  const maxLength = memory.config.limits.maxContentLength;
  for (const turn of intoTurns(messages)) {
    const ids = turn.messages.flatMap((message) => (typeof message.id === 'string' ? [message.id] : []));
    const userText = turn.user ? messageText(turn.user) : '';
    if (!turn.user || userText === '') {
      // The rest of a turn whose user message was flushed before, or a message with no text: nothing to extract.
      if (turn.user) outcome.skipped.push({ id: idOf(turn.user), reason: 'no text' });
      outcome.done.push(...ids);
      continue;
    }
    const reply = turn.messages.filter((message) => message.role === 'assistant' && messageText(message) !== '');
    const lastReply = reply.at(-1);
    try {
      const retrieved = await memory.search(lastCharacters(userText, maxLength), {
        scope: options.scope,
        limit: options.retrieval.limit,
        minScore: options.retrieval.minScore,
        ...(options.retrieval.filter ? { filter: options.retrieval.filter } : {}),
      });
      // A memory that keeps this message's id among its sources was extracted from it already: the session
      // was resumed from a snapshot, and LlamaIndex hands over again what an earlier process recorded.
      const userId = idOf(turn.user);
      if (userId !== undefined && !options.retrying?.has(userId) && retrieved.some((result) => result.memory.sources.includes(userId))) {
        outcome.skipped.push({ id: userId, reason: ALREADY_RECORDED });
        outcome.done.push(...ids);
        continue;
      }
      const report = await options.pipeline.afterTurn({
        scope: options.scope,
        user: { content: userText, ...(userId ? { id: userId } : {}) },
        ...(lastReply
          ? { assistant: { content: reply.map((message) => messageText(message)).join('\n'), ...(idOf(lastReply) ? { id: idOf(lastReply) } : {}) } }
          : {}),
        retrieved,
      });
      outcome.reports.push(report);
      const failed = report.errors.find((entry) => entry.step === 'extraction');
      if (failed) throw failed.error;
    } catch (error) {
      if (MemloomError.isInstance(error) && CONTENT_ERRORS.has(error.code)) {
        outcome.skipped.push({ id: idOf(turn.user), reason: error.message });
        outcome.done.push(...ids);
        continue;
      }
      outcome.remaining = messages.slice(messages.indexOf(turn.messages[0] as MemoryMessage));
      outcome.error = error;
      break;
    }
    outcome.done.push(...ids);
  }
  return outcome;
}

/** Cut a flush into turns: each user message (not a tool result) opens one; messages before the first belong to an earlier turn. */
function intoTurns(messages: readonly MemoryMessage[]): FlushedTurn[] {
  const turns: FlushedTurn[] = [];
  for (const message of messages) {
    const current = turns.at(-1);
    if (isUserTurn(message)) turns.push({ messages: [message], user: message });
    else if (current) current.messages.push(message);
    else turns.push({ messages: [message], user: undefined });
  }
  return turns;
}

function idOf(message: MemoryMessage): string | undefined {
  return typeof message.id === 'string' && message.id !== '' ? message.id : undefined;
}
