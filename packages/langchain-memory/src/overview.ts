import { scopeKey, type Memory, type MemoryRecord, type Scope } from '@memloom/core';
import { z } from 'zod';
import { MemloomTool } from './memloom-tool.js';
import { resolveScope, threadOf, type RunInfo, type ScopeOption } from './scope.js';
import { runInSession } from './session-lock.js';
import { requiredText } from './tools.js';

/** Tag of the record that holds an agent's working-memory overview (seed 003). */
export const WORKING_MEMORY_TAG = 'working-memory';

/** Name of the tool that rewrites the overview; calling it is what "updating the overview" means. */
export const WORKING_MEMORY_TOOL = 'working_memory_write';

/**
 * The scope of a thread's overview: the run's scope narrowed to its thread
 * (`configurable.thread_id`) when it has one, because working memory belongs
 * to one conversation.
 */
export function overviewScope(scope: Scope, run: RunInfo): Scope {
  const thread = threadOf(run);
  return scope.sessionId || !thread ? scope : { ...scope, sessionId: thread };
}

/**
 * The current overview of a scope. It is a `system` record (never decayed,
 * compressed or merged) found by its exact scope, so a user-level overview
 * and a thread's overview never stand in for each other.
 */
export async function readOverview(memory: Memory, scope: Scope): Promise<MemoryRecord | undefined> {
  const [latest] = await memory.list({
    scope,
    filter: { tags: [WORKING_MEMORY_TAG], metadata: { workingMemoryScope: scopeKey(scope) } },
    orderBy: 'updatedAt',
    direction: 'desc',
    limit: 1,
  });
  return latest;
}

/**
 * Replace the overview of a scope (its history keeps every earlier version). Writes of one scope run
 * one at a time (in this process, over the same store): two at once (parallel tool calls) would each
 * find no overview and add one.
 */
export async function writeOverview(memory: Memory, scope: Scope, content: string): Promise<MemoryRecord> {
  return runInSession(memory.store, JSON.stringify([WORKING_MEMORY_TAG, scopeKey(scope)]), async () => {
    const current = await readOverview(memory, scope);
    if (current) {
      return memory.update(current.id, { content }, { scope, refreshTimestamp: true, reason: 'working memory overview rewritten' });
    }
    const { memory: created } = await memory.add(content, {
      scope,
      category: 'system',
      source: 'background_ai',
      tags: [WORKING_MEMORY_TAG],
      metadata: { workingMemoryScope: scopeKey(scope) },
      merge: false,
    });
    return created;
  });
}

/** `working_memory_write(content)`: rewrite the overview of the current task. */
export function workingMemoryWriteTool(memory: Memory, options: { scope?: ScopeOption } = {}) {
  return new MemloomTool({
    name: WORKING_MEMORY_TOOL,
    description:
      'Rewrite your working-memory overview for this conversation: the current task, its status and progress, ' +
      'recent decisions and open questions. Replaces the previous overview; you see it in every request.',
    schema: z.object({ content: requiredText('content', 'the complete new overview (markdown)') }),
    run: async ({ content }, call) => {
      const scope = overviewScope(await resolveScope(options.scope, call, WORKING_MEMORY_TOOL), call);
      const record = await writeOverview(memory, scope, content);
      return `Working memory overview saved (${Buffer.byteLength(record.content, 'utf8')} bytes).`;
    },
  });
}
