import { DEFAULT_RECALL_FILTER, matchesFilter, MemloomError, type AddResult, type Memory, type MemoryFilter, type Scope, type SearchResult } from '@memloom/core';
import { z } from 'zod';
import { checkedFilter } from './errors.js';
import { MemloomTool, type ToolCallInfo } from './memloom-tool.js';
import { resolveScope, type ScopeOption } from './scope.js';

/** What the middleware injects and the tools see by default: facts, core facts and episodes (not `system` records); core's. */
export { DEFAULT_RECALL_FILTER };

/** Tag on `memory_append(slot: "today")` notes, so the middleware can add the recent ones (seed 001's `recent_days`). */
export const DAILY_NOTE_TAG = 'daily-note';

export interface MemloomToolsOptions {
  /** Whose memories the tools read and write. @default userId / agentId / sessionId from the run's context or configurable */
  scope?: ScopeOption;
  /** Which memories `memory_search` returns and `memory_forget` may delete. @default DEFAULT_RECALL_FILTER */
  filter?: MemoryFilter;
  /**
   * Results of `memory_search` when the model gives no limit (seed 001's `retrieve_limit`): a number, or
   * the number for the run's scope (the middleware reads its pipeline's policy, stored overrides included).
   * @default the memory's own: `memory.search` without a limit (its policy's `retrieve_limit`, 10, and the scope's stored overrides)
   */
  defaultLimit?: number | ((scope: Scope) => number | Promise<number>);
}

/**
 * Seed 001's memory tools, plus `memory_forget`:
 * - `memory_search(query, limit = retrieve_limit)`: relevant memories with their ids (and freshness notes when the memory has `freshness` configured).
 * - `memory_append(content, slot = "long_term" | "today")`: long_term stores a fact through the
 *   strategy engine (merge / keep both / new); today stores an `episode` note dated today. The
 *   run's signal goes to the add: an abort stops a merge's model call and stores nothing.
 * - `memory_forget(id)`: deletes one memory of the current user.
 *
 * The scope never comes from the model: it is resolved from the run, so a
 * model cannot read or touch another user's memories.
 */
export function createMemloomTools(memory: Memory, options: MemloomToolsOptions = {}): MemloomTool[] {
  return [memorySearchTool(memory, options), memoryAppendTool(memory, options), memoryForgetTool(memory, options)] as MemloomTool[];
}

export function memorySearchTool(memory: Memory, options: MemloomToolsOptions = {}) {
  const filter = checkedFilter(options.filter, DEFAULT_RECALL_FILTER, 'memory_search');
  return new MemloomTool({
    name: 'memory_search',
    description:
      'Search long-term memory about the current user (preferences, facts, earlier conversations). ' +
      'Returns matching memories with their ids and dates.',
    schema: z.object({
      query: requiredText('query', 'keywords or a question'),
      limit: z
        .number({ error: 'limit must be a whole number from 1 to 50' })
        .int({ error: 'limit must be a whole number from 1 to 50' })
        .min(1, { error: 'limit must be a whole number from 1 to 50' })
        .max(50, { error: 'limit must be a whole number from 1 to 50' })
        .optional()
        .describe(`How many memories to return (${typeof options.defaultLimit === 'number' ? `default ${options.defaultLimit}` : 'leave it out for the usual number'}).`),
    }),
    run: async ({ query, limit }, call) => {
      const scope = await resolveScope(options.scope, call, 'memory_search');
      const given = limit ?? (typeof options.defaultLimit === 'function' ? await options.defaultLimit(scope) : options.defaultLimit);
      const results = await memory.search(query, { scope, ...(given !== undefined ? { limit: given } : {}), filter, ...signalOf(call) });
      return formatResults(query, results);
    },
  });
}

export function memoryAppendTool(memory: Memory, options: MemloomToolsOptions = {}) {
  return new MemloomTool({
    name: 'memory_append',
    description:
      'Save something worth remembering about the user. slot "long_term" (default) for lasting facts and preferences; ' +
      'slot "today" for a note about today (plans, what happened). Similar memories are merged automatically.',
    schema: z.object({
      content: requiredText('content', 'what to remember, as a short statement'),
      // Optional, defaulted in the body: zod 4 lists a `.default()` field as required in the JSON schema the model sees.
      slot: z
        .enum(['long_term', 'today'], { error: 'slot must be "long_term" or "today"' })
        .optional()
        .describe('"long_term" (default) or "today".'),
    }),
    run: async ({ content, slot = 'long_term' }, call) => {
      const scope = await resolveScope(options.scope, call, 'memory_append');
      const date = new Date(memory.clock.now()).toISOString().slice(0, 10);
      const result =
        slot === 'today'
          ? await memory.add(content, {
              scope,
              category: 'episode',
              source: 'background_ai',
              tags: [DAILY_NOTE_TAG],
              metadata: { slot: 'today', date },
              ...sourcesOf(call),
              ...signalOf(call),
            })
          : await memory.add(content, { scope, category: 'fact', source: 'background_ai', metadata: { slot: 'long_term' }, ...sourcesOf(call), ...signalOf(call) });
      return `${describeDecision(result, slot)}\n## ${date}\n${result.memory.content}`;
    },
  });
}

export function memoryForgetTool(memory: Memory, options: MemloomToolsOptions = {}) {
  const filter = checkedFilter(options.filter, DEFAULT_RECALL_FILTER, 'memory_forget');
  return new MemloomTool({
    name: 'memory_forget',
    description: 'Delete one memory of the current user by its id (as shown by memory_search), e.g. when the user asks you to forget it or it is wrong.',
    schema: z.object({ id: requiredText('id', 'the id of the memory to delete, from memory_search') }),
    run: async ({ id }, call) => {
      const scope = await resolveScope(options.scope, call, 'memory_forget');
      const found = await memory.get(id, { scope });
      if (!found || !matchesFilter(found, filter)) notFound(id);
      await memory.delete(id, { scope });
      return `Forgot memory ${id}: "${oneLine(found.content)}"`;
    },
  });
}

/** A required, trimmed, non-empty string with model-readable errors. */
export function requiredText(name: string, description: string) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be a string`) })
    .trim()
    .min(1, { error: `${name} must not be empty` })
    .describe(description);
}

function notFound(id: string): never {
  throw new MemloomError({
    code: 'NOT_FOUND',
    backend: 'langchain',
    message: `no memory with id "${id}" belongs to the current user; nothing was deleted (use memory_search to find ids)`,
    details: { id },
  });
}

function formatResults(query: string, results: SearchResult[]): string {
  if (results.length === 0) return `No memories match "${query}".`;
  const lines = results.map((result, index) => {
    const { memory } = result;
    const line = `${index + 1}. [id: ${memory.id}] (${memory.category}, updated ${memory.updatedAt.slice(0, 10)}) ${oneLine(memory.content)}`;
    return result.freshness ? `${line}\n   ${result.freshness.replace(/\n/g, '\n   ')}` : line;
  });
  return `Found ${results.length} ${results.length === 1 ? 'memory' : 'memories'} for "${query}":\n${lines.join('\n')}`;
}

function describeDecision(result: AddResult, slot: 'long_term' | 'today'): string {
  const where = slot === 'today' ? "today's notes" : 'long-term memory';
  switch (result.decision.strategy) {
    case 'merge_update':
      return `Merged into existing memory ${result.memory.id} in ${where}.`;
    case 'keep_both':
      return `Saved to ${where} as ${result.memory.id}, beside the related memory ${result.decision.nearestId ?? ''}.`.replace(' .', '.');
    case 'create_new':
      return `Saved to ${where} as ${result.memory.id}.`;
  }
}

function sourcesOf(call: ToolCallInfo): { sources?: string[] } {
  return call.toolCallId ? { sources: [call.toolCallId] } : {};
}

/** The run's signal, so that aborting the run stops the add (its merge's model call) and writes nothing. */
function signalOf(call: ToolCallInfo): { signal?: AbortSignal } {
  return call.signal ? { signal: call.signal } : {};
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
