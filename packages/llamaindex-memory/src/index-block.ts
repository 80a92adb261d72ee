import { BaseMemoryBlock, type MemoryMessage } from '@llamaindex/core/memory';
import { fitLines, type Logger, type Memory, type MemoryFilter, type Scope } from '@memloom/core';
import { z } from 'zod';
import { assertMessages, countTokens, escapeTags, MESSAGE_ROLES } from './messages.js';
import {
  blockIdSchema,
  consoleLogger,
  errorMessage,
  filterSchema,
  loggerSchema,
  memorySchema,
  parseOptions,
  prioritySchema,
  requireScope,
  tokenLimitSchema,
} from './options.js';

export interface MemoryIndexBlockOptions {
  /** The memloom memory whose index is shown. */
  memory: Memory;
  /** Whose index. Required, with at least one of userId, agentId, sessionId. */
  scope: Scope;
  /** @default 'memloom-index' */
  id?: string;
  /** Below the relevant memories (priority 2) by default, so a long index never crowds them out. @default 1 */
  priority?: number;
  /** Most tokens the index may take; past it, it is cut on a line boundary with a warning. @default 2048 */
  tokenLimit?: number;
  /**
   * Only memories matching this filter are listed; `{}` for every category.
   * @default facts, core facts and episodes: `{ category: ['core', 'fact', 'episode'] }` (not `system` records, such as LangChain's chat history)
   */
  filter?: MemoryFilter;
  /** Most memories read for the index (the most recently updated). @default 1000 */
  limit?: number;
  /** Role of the returned message. @default 'memory' */
  messageRole?: (typeof MESSAGE_ROLES)[number];
  /** @default console.warn */
  logger?: Logger;
}

const optionsSchema = z
  .object({
    memory: memorySchema,
    scope: z.unknown().optional(),
    id: blockIdSchema.default('memloom-index'),
    priority: prioritySchema.default(1),
    tokenLimit: tokenLimitSchema.default(2048),
    filter: filterSchema,
    limit: z.number().int().positive().default(1000),
    messageRole: z.enum(MESSAGE_ROLES).default('memory'),
    logger: loggerSchema.optional(),
  })
  .strict();

/**
 * Injects the MEMORY.md index (core's `renderIndex`): one line per memory,
 * grouped by category, with seed 000's `_(last updated N days ago)_` on stale
 * lines (when the memory has `freshness` configured) and its cut at 200 lines / 25 KB. The block also keeps the index within
 * its token limit, cutting on a line boundary with the same kind of warning.
 * Memory text is escaped so it cannot close the fence. A failing store is
 * logged and gives no index.
 */
export class MemoryIndexBlock extends BaseMemoryBlock {
  readonly memory: Memory;
  readonly scope: Scope;
  private readonly settings: z.output<typeof optionsSchema>;
  private readonly logger: Logger;

  constructor(options: MemoryIndexBlockOptions) {
    const settings = parseOptions(optionsSchema, options, 'MemoryIndexBlock');
    const scope = requireScope(settings.scope, 'MemoryIndexBlock');
    super({ id: settings.id, priority: settings.priority, isLongTerm: false });
    this.settings = settings;
    this.memory = settings.memory;
    this.scope = scope;
    this.logger = settings.logger ?? consoleLogger;
  }

  async get(messages: MemoryMessage[] = []): Promise<MemoryMessage[]> {
    assertMessages(messages, 'MemoryIndexBlock.get');
    let index: string;
    try {
      index = await this.memory.renderIndex({
        scope: this.scope,
        limit: this.settings.limit,
        filter: this.settings.filter,
      });
    } catch (error) {
      this.logger.warn?.(`memory block ${this.id}: could not read the memory index, answering without it: ${errorMessage(error)}`, { error });
      return [];
    }
    const content = fitToTokens(index.trimEnd(), this.settings.tokenLimit);
    return content === '' ? [] : [{ id: `${this.id}-index`, role: this.settings.messageRole, content }];
  }

  /** The index is read from memloom, not fed from flushed messages. */
  async put(_messages: MemoryMessage[]): Promise<void> {}
}

/** Create a {@link MemoryIndexBlock}. */
export function memoryIndexBlock(options: MemoryIndexBlockOptions): MemoryIndexBlock {
  return new MemoryIndexBlock(options);
}

/** Fence the index and keep as many whole lines as fit in `tokenLimit`, with a warning when lines were cut. */
function fitToTokens(index: string, tokenLimit: number): string {
  return fitLines(index, {
    wrap: (body) => `<memory-index>\n${escapeTags(body)}\n</memory-index>`,
    warning:
      `\n\n> **WARNING**: MEMORY.md has been truncated (exceeded ${tokenLimit} tokens). ` +
      'Some memories are not shown. Search the memory store to see the rest.',
    fits: (block) => countTokens(block) <= tokenLimit,
  });
}
