import { DEFAULT_CONTEXT_WEIGHT, formatZodIssues, systemClock, timeOrderedId, type Clock, type Embedder, type Logger } from '@memloom/core';
import { z } from 'zod';
import { storeError } from './errors.js';

export interface MarkdownStoreOptions {
  /**
   * Folder that holds every scope's files. Each scope gets a folder below it
   * (`users/alice/memory/MEMORY.md`, `memory/MEMORY.md` for the empty scope).
   * Created when missing, unless `mustExist`.
   */
  root: string;
  /**
   * Use `root` only if it holds a store (`.memloom/store.json` or a
   * `memory/` folder): a missing folder, or one holding neither, is
   * MISSING_RESOURCE naming it, and nothing is created or written (for tools
   * that only read, where a mistyped path must not leave a store behind).
   * @default false (a missing folder is created)
   */
  mustExist?: boolean;
  /**
   * Embeds blocks a person wrote or changed, and rebuilds vectors when the
   * derived index is missing or was made by another embedder. Give the same
   * embedder as the Memory's. Without one those blocks are found by text
   * search and listing only, and `sync()` reports them.
   * @default undefined
   */
  embedder?: Embedder;
  /**
   * How far a memory's context pulls the vectors this store makes itself
   * (hand-written and hand-edited blocks, a rebuilt index):
   * normalize(v(content) + contextWeight · v(context)), as core does on add.
   * Use the same value as the Memory's `retrieval.contextWeight`. Finite, >= 0.
   * @default DEFAULT_CONTEXT_WEIGHT (0.7)
   */
  contextWeight?: number;
  /**
   * Backups kept per Markdown file in `memory/backups/` (oldest deleted
   * first). At least 1: nothing is overwritten without a backup.
   * @default 20
   */
  backupRetention?: number;
  /**
   * How often reads look at the files for outside changes (a person's edits,
   * other processes' writes), in milliseconds. 0 looks before every read;
   * writes always look first.
   * @default 0
   */
  checkIntervalMs?: number;
  /**
   * Longest wait for the cross-process lock before a write fails with TIMEOUT.
   * @default 10000
   */
  lockTimeoutMs?: number;
  /**
   * A lock not refreshed for this long is taken over. A lock whose process
   * is gone (same host) is taken over at once.
   * @default 30000
   */
  lockStaleMs?: number;
  /**
   * fsync files and folders on every write. Turning it off is faster and
   * still atomic against a crashed process, but not against power loss.
   * @default true
   */
  fsync?: boolean;
  /** Injected time: version timestamps, backup names, hand-written block dates. @default the system clock */
  clock?: Clock;
  /** Id for memories written by hand. @default time-ordered UUIDs (version 7) at `clock`'s time, core's `timeOrderedId` */
  generateId?: () => string;
  /** Receives warnings: unreadable files, blocks without vectors. @default none */
  logger?: Logger;
}

export interface ResolvedOptions {
  root: string;
  mustExist: boolean;
  embedder: Embedder | undefined;
  contextWeight: number;
  backupRetention: number;
  checkIntervalMs: number;
  lockTimeoutMs: number;
  lockStaleMs: number;
  fsync: boolean;
  clock: Clock;
  generateId: () => string;
  logger: Logger;
}

const schema = z.strictObject({
  root: z.string().refine((root) => root.trim() !== '', 'must name a folder, not be blank'),
  mustExist: z.boolean().default(false),
  embedder: z
    .custom<Embedder>((value) => {
      const candidate = value as Partial<Embedder> | undefined;
      return !!candidate && typeof candidate.embed === 'function' && typeof candidate.id === 'string' && Number.isInteger(candidate.dimension);
    }, 'must be an Embedder (id, dimension, embed)')
    .optional(),
  contextWeight: z.number().min(0).default(DEFAULT_CONTEXT_WEIGHT),
  backupRetention: z.number().int().min(1).default(20),
  checkIntervalMs: z.number().min(0).default(0),
  lockTimeoutMs: z.number().int().min(0).default(10_000),
  lockStaleMs: z.number().int().min(100).default(30_000),
  fsync: z.boolean().default(true),
  clock: z.custom<Clock>((value) => typeof (value as Clock | undefined)?.now === 'function', 'must have now()').optional(),
  generateId: z.custom<() => string>((value) => typeof value === 'function', 'must be a function').optional(),
  logger: z.custom<Logger>((value) => typeof value === 'object' && value !== null, 'must be an object').optional(),
});

export function resolveOptions(options: MarkdownStoreOptions): ResolvedOptions {
  if (!options || typeof options !== 'object') {
    throw storeError('INVALID_OPTIONS', 'createMarkdownStore needs options like { root: "./memories" }');
  }
  const parsed = schema.safeParse(options);
  if (!parsed.success) throw storeError('INVALID_OPTIONS', `invalid markdown store options: ${formatZodIssues(parsed.error)}`);
  const value = parsed.data;
  const clock = value.clock ?? systemClock;
  return {
    root: value.root,
    mustExist: value.mustExist,
    embedder: value.embedder,
    contextWeight: value.contextWeight,
    backupRetention: value.backupRetention,
    checkIntervalMs: value.checkIntervalMs,
    lockTimeoutMs: value.lockTimeoutMs,
    lockStaleMs: value.lockStaleMs,
    fsync: value.fsync,
    clock,
    generateId: value.generateId ?? (() => timeOrderedId(clock.now())),
    logger: value.logger ?? {},
  };
}
