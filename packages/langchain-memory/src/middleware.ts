import { AIMessage, RemoveMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { REMOVE_ALL_MESSAGES } from '@langchain/langgraph';
import { createMiddleware } from 'langchain';
import {
  MemloomError,
  resolvePolicy,
  scopeKey,
  toMemloomError,
  WorkingMemoryTracker,
  type Memory,
  type MemoryFilter,
  type MemoryRecord,
  type PolicyOverrides,
  type WorkingMemoryConfigInput,
} from '@memloom/core';
import { z } from 'zod';
import { recordTurn } from './after-turn.js';
import { latestUserInput, messageText, safeCutoff, isSummaryMessage } from './messages.js';
import { overviewScope, readOverview, WORKING_MEMORY_TOOL, workingMemoryWriteTool } from './overview.js';
import { buildMemoryPrompt } from './prompt.js';
import { resolveScope, threadOf, type RunInfo, type ScopeOption } from './scope.js';
import { recordSummary, summarizeMessages, summaryMessage } from './summary.js';
import { approximateTokens, contextWindowOf, type TokenCounter } from './tokens.js';
import { createMemloomTools, DEFAULT_RECALL_FILTER } from './tools.js';

/** The step of the middleware that failed, as given to `onError`. */
export type MemloomMiddlewareStep = 'retrieve' | 'summarize' | 'record';

export interface MemloomMiddlewareOptions {
  /**
   * Whose memories to use. @default `userId`, `agentId`, `sessionId` from `runtime.context`, then
   * `configurable` (snake_case accepted). A run with no scope at all fails with INVALID_SCOPE.
   */
  scope?: ScopeOption;
  /** Seed 001's policy (`retrieve_limit`, `recent_days`, `session_summary_*`); unset keys keep their defaults. */
  policy?: PolicyOverrides;
  /** Which memories are injected and seen by the tools. @default facts, core facts and episodes ({@link DEFAULT_RECALL_FILTER}) */
  filter?: MemoryFilter;
  /** Register `memory_search`, `memory_append` and `memory_forget` with the agent. @default true */
  tools?: boolean;
  /** Record what the user said after each turn, through the strategy engine. @default true */
  recordTurns?: boolean;
  /** Summarize the conversation when it passes the policy's message or token threshold. @default true */
  summarize?: boolean;
  /**
   * Seed 003's working memory: the thread's overview in every prompt, the `working_memory_write`
   * tool, and a reminder after too many rounds without an update. `false` turns all of it off.
   * @default {} (maxRounds 5, minRounds 3, tokenThresholdPercent 70)
   */
  workingMemory?: WorkingMemoryConfigInput | false;
  /** Tool calls that count as updating the overview (a successful result resets the count). @default ['working_memory_write'] */
  overviewTools?: string[];
  /** The model's context window, for the token thresholds. @default the model's profile `maxInputTokens`, once seen */
  contextWindowTokens?: number;
  /** How tokens are counted. @default about four characters (or one CJK character) per token */
  countTokens?: TokenCounter;
  /**
   * Called instead of throwing when a memory step fails, so the agent can go on without memory.
   * @default none: the error propagates and the run fails
   */
  onError?: (error: MemloomError, step: MemloomMiddlewareStep) => void;
}

/** Most threads whose working-memory rounds are tracked at once; the least recently used is dropped. */
const MAX_TRACKED_THREADS = 1000;

/** Context fields the middleware reads (LangChain hands a middleware only the context keys it declares). */
const contextSchema = z.object({
  userId: z.string().optional(),
  user_id: z.string().optional(),
  agentId: z.string().optional(),
  agent_id: z.string().optional(),
  sessionId: z.string().optional(),
  session_id: z.string().optional(),
});

/**
 * Memory for a `createAgent` agent:
 * - before each model call, the memories relevant to the user's latest message (and the last
 *   `recent_days` of daily notes) go into the system prompt, fenced in `<memories>` with
 *   seed 000's freshness notes, followed by the thread's working-memory overview and, when due,
 *   seed 003's reminder;
 * - before a model call, a conversation past seed 001's message or token threshold is
 *   summarized: older messages are replaced by one summary message and kept as an episode;
 * - after the turn, what the user said is recorded through the strategy engine;
 * - the agent gets `memory_search`, `memory_append`, `memory_forget` and `working_memory_write`.
 */
export function createMemloomMiddleware(memory: Memory, options: MemloomMiddlewareOptions = {}) {
  assertMemory(memory);
  const policy = resolvePolicy([{ source: 'createMemloomMiddleware options.policy', values: options.policy }]);
  const filter = options.filter ?? DEFAULT_RECALL_FILTER;
  const countTokens = options.countTokens ?? approximateTokens;
  const workingMemory = options.workingMemory === false ? undefined : options.workingMemory ?? {};
  const trackerConfig = workingMemory && {
    overviewPath: WORKING_MEMORY_TOOL,
    detailPath: 'memory_append (slot "today")',
    ...workingMemory,
  };
  // Fail on bad working-memory options now, not at the first model call.
  if (trackerConfig) new WorkingMemoryTracker(trackerConfig);
  const overviewTools = new Set(options.overviewTools ?? [WORKING_MEMORY_TOOL]);
  const trackers = new Map<string, WorkingMemoryTracker>();
  const retrievedByRun = new Map<string, MemoryRecord[]>();
  let contextWindow = options.contextWindowTokens;

  const tools = [
    ...(options.tools === false ? [] : createMemloomTools(memory, { filter, defaultLimit: policy.retrieve_limit, ...scopeOption(options) })),
    ...(workingMemory ? [workingMemoryWriteTool(memory, scopeOption(options))] : []),
  ];

  const guard = async <T>(step: MemloomMiddlewareStep, work: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await work();
    } catch (error) {
      const wrapped = toMemloomError(error, { code: 'STORE_ERROR', backend: 'langchain', message: `memory step "${step}" failed` });
      if (!options.onError) throw wrapped;
      options.onError(wrapped, step);
      return undefined;
    }
  };

  const trackerFor = (key: string): WorkingMemoryTracker => {
    let tracker = trackers.get(key);
    if (tracker) {
      trackers.delete(key);
    } else {
      tracker = new WorkingMemoryTracker(trackerConfig || {});
      if (trackers.size >= MAX_TRACKED_THREADS) trackers.delete(trackers.keys().next().value as string);
    }
    trackers.set(key, tracker);
    return tracker;
  };

  return createMiddleware({
    name: 'MemloomMiddleware',
    contextSchema,
    tools,

    beforeModel: async (state, runtime) => {
      if (options.summarize === false) return undefined;
      const messages = state.messages;
      return guard('summarize', async () => {
        const over =
          messages.length > policy.session_summary_message_threshold ||
          (contextWindow !== undefined && (await countTokens(messages)) > (contextWindow * policy.session_summary_token_percent) / 100);
        if (!over) return undefined;
        const cutoff = safeCutoff(messages, policy.session_summary_keep_count);
        const folded = messages.slice(0, cutoff);
        if (!folded.some((message) => !isSummaryMessage(message))) return undefined;
        const run = runInfo(runtime);
        const scope = await resolveScope(options.scope, run, 'createMemloomMiddleware');
        const summary = await summarizeMessages(memory, folded);
        await recordSummary(memory, summary, overviewScope(scope, run), folded);
        return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), summaryMessage(summary), ...messages.slice(cutoff)] };
      });
    },

    wrapModelCall: async (request, handler) => {
      const run = runInfo(request.runtime);
      const addition = await guard('retrieve', async () => {
        const scope = await resolveScope(options.scope, run, 'createMemloomMiddleware');
        contextWindow ??= contextWindowOf(request.model);
        const query = latestUserInput(request.messages).map(messageText).join('\n').trim();
        const threadScope = overviewScope(scope, run);
        const key = threadOf(run) ?? scopeKey(scope);
        let workingMemoryPart: { overview: string; reminder: string } | undefined;
        if (trackerConfig) {
          const tracker = trackerFor(key);
          if (wroteOverview(request.messages, overviewTools)) tracker.markUpdated();
          const overview = (await readOverview(memory, threadScope))?.content ?? '';
          const check = tracker.checkRound({
            tokensUsed: await countTokens([request.systemMessage, ...request.messages]),
            tokensMax: contextWindow ?? 0,
            messageCount: request.messages.length,
            overviewBytes: Buffer.byteLength(overview, 'utf8'),
          });
          workingMemoryPart = { overview, reminder: check.reminder };
        }
        const prompt = await buildMemoryPrompt(memory, {
          scope,
          query,
          filter,
          policy,
          ...(threadScope.sessionId ? { sessionId: threadScope.sessionId } : {}),
          ...(workingMemoryPart ? { workingMemory: workingMemoryPart } : {}),
        });
        remember(retrievedByRun, key, prompt.retrieved);
        return prompt.text;
      });
      if (!addition) return handler(request);
      const current = messageText(request.systemMessage);
      return handler({ ...request, systemMessage: request.systemMessage.concat(current.trim() === '' ? addition : `\n\n${addition}`) });
    },

    afterAgent: async (state, runtime) => {
      if (options.recordTurns === false) return undefined;
      const run = runInfo(runtime);
      const input = latestUserInput(state.messages);
      if (input.length === 0) return undefined;
      await guard('record', async () => {
        const scope = await resolveScope(options.scope, run, 'createMemloomMiddleware');
        const key = threadOf(run) ?? scopeKey(scope);
        const retrieved = retrievedByRun.get(key) ?? [];
        retrievedByRun.delete(key);
        const answer = [...state.messages].reverse().find((message) => AIMessage.isInstance(message));
        await recordTurn(memory, {
          scope,
          user: input.map((message) => ({ content: messageText(message), ...(message.id ? { id: message.id } : {}) })),
          ...(answer ? { assistant: { content: messageText(answer), ...(answer.id ? { id: answer.id } : {}) } } : {}),
          retrieved,
        });
      });
      return undefined;
    },
  });
}

/**
 * Whether the model's previous step wrote the overview: a successful result of
 * an overview tool among the messages after the last AI message. Each step's
 * results are seen by exactly one model call, so nothing is counted twice.
 */
function wroteOverview(messages: readonly BaseMessage[], overviewTools: ReadonlySet<string>): boolean {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as BaseMessage;
    if (AIMessage.isInstance(message)) return false;
    if (ToolMessage.isInstance(message) && message.status !== 'error' && message.name && overviewTools.has(message.name)) return true;
  }
  return false;
}

function remember(map: Map<string, MemoryRecord[]>, key: string, records: MemoryRecord[]): void {
  const known = map.get(key) ?? [];
  const ids = new Set(known.map((record) => record.id));
  map.delete(key);
  if (map.size >= MAX_TRACKED_THREADS) map.delete(map.keys().next().value as string);
  map.set(key, [...known, ...records.filter((record) => !ids.has(record.id))]);
}

function runInfo(runtime: { context?: unknown; configurable?: Record<string, unknown> }): RunInfo {
  return { context: runtime.context, ...(runtime.configurable ? { configurable: runtime.configurable } : {}) };
}

function scopeOption(options: MemloomMiddlewareOptions): { scope?: ScopeOption } {
  return options.scope ? { scope: options.scope } : {};
}

function assertMemory(memory: unknown): asserts memory is Memory {
  const candidate = memory as Partial<Memory> | undefined;
  if (!candidate || typeof candidate.search !== 'function' || typeof candidate.add !== 'function') {
    throw new MemloomError({
      code: 'INVALID_OPTIONS',
      backend: 'langchain',
      message: 'createMemloomMiddleware needs a Memory (from createMemory) as its first argument',
    });
  }
}
