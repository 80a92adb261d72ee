import { systemClock, type Clock, type Embedder, type LanguageModel, type MemoryChange, type MemoryStore } from './contracts.js';
import type { FreshnessConfig } from './config.js';
import { baseImportanceFor, baseWeightFor, daysBetween } from './decay.js';
import { MemloomError, toMemloomError } from './errors.js';
import { freshnessNote, freshnessThresholdMs } from './freshness.js';
import { KeyedLock } from './keyed-lock.js';
import { runMaintenance, type MaintainOptions, type MaintenanceReport } from './maintenance.js';
import {
  addOptionsSchema,
  engineConfigSchema,
  listOptionsSchema,
  parseOrThrow,
  searchOptionsSchema,
  toEpochMs,
  updateOptionsSchema,
  updatePatchSchema,
  type EngineConfig,
  type EngineConfigInput,
} from './options.js';
import { defaultPrompts, type Prompts } from './prompts.js';
import { createRecord, unique, validateContent, validateId, versionOf } from './records.js';
import { renderContextBlock, renderIndex } from './render.js';
import { rankCandidates } from './retrieval.js';
import { inScope, isEmptyScope, scopeKey, validateScope } from './scope.js';
import { TextOperations } from './text-operations.js';
import type { MemoryFilter, MemoryRecord, MemoryVersion, Scope, ScoreParts } from './types.js';
import { boostedWeight, decideUpdate, upgradedLevel, type UpdateDecision } from './update-strategy.js';
import { assertValidVector } from './vector.js';

export interface Logger {
  debug?(message: string, details?: Record<string, unknown>): void;
  warn?(message: string, details?: Record<string, unknown>): void;
}

export interface CreateMemoryOptions extends EngineConfigInput {
  store: MemoryStore;
  embedder: Embedder;
  /** Used for merge and compression text when given; a deterministic fallback otherwise. */
  languageModel?: LanguageModel;
  /** Injected time. @default the system clock */
  clock?: Clock;
  /** Id generator for new memories. @default crypto.randomUUID */
  generateId?: () => string;
  /** Scope applied when a call gives none (e.g. `{ userId: 'alice' }` for a single-user app). */
  scope?: Scope;
  /** Override any prompt sent to the language model. */
  prompts?: Partial<Prompts>;
  logger?: Logger;
}

export interface AddOptions {
  scope?: Scope;
  category?: MemoryRecord['category'];
  type?: MemoryRecord['type'];
  importance?: number;
  source?: MemoryRecord['source'];
  verified?: boolean;
  /** Ids of the messages or turns this content came from. */
  sources?: string[];
  tags?: string[];
  metadata?: Record<string, unknown>;
  /** When the content was said. @default now */
  at?: Date | string | number;
  /** @default 'user_mention' */
  trigger?: 'user_mention' | 'extraction' | 'import';
  /**
   * `false` stores the content as an independent new memory without comparing
   * it to existing ones: no merge, no keep-both, no boost of a neighbour. For
   * verbatim records that an adapter addresses by its own key (chat
   * transcripts, key-value items), where merging two records would lose one.
   * @default true
   */
  merge?: boolean;
}

export interface AddResult {
  decision: UpdateDecision;
  /** The memory created, or the one merged into. */
  memory: MemoryRecord;
  /** For keep-both and new: the nearest old memory after its weight boost (content, level and timestamp unchanged). */
  boosted?: MemoryRecord;
  /** Set when a language model was asked and its answer was not used. */
  modelFallback?: string;
}

export interface SearchOptions {
  scope?: Scope;
  /** @default retrieval.defaultLimit (10) */
  limit?: number;
  filter?: MemoryFilter;
  /** Drop results scoring below this (0..1). */
  minScore?: number;
}

export interface SearchResult {
  memory: MemoryRecord;
  /** Combined score in 0..1. */
  score: number;
  parts: ScoreParts;
  /** Seed 000's warning when the memory is older than its freshness threshold, else undefined. */
  freshness?: string;
}

export interface ListOptions {
  scope?: Scope;
  filter?: MemoryFilter;
  limit?: number;
  offset?: number;
  orderBy?: 'createdAt' | 'updatedAt' | 'id';
  direction?: 'asc' | 'desc';
}

export interface UpdatePatch {
  content?: string;
  category?: MemoryRecord['category'];
  type?: MemoryRecord['type'];
  level?: MemoryRecord['level'];
  importance?: number;
  weight?: number;
  verified?: boolean;
  /** Replaces the provenance list (ids of the messages or turns the memory came from). */
  sources?: string[];
  tags?: string[];
  metadata?: Record<string, unknown>;
}

export interface UpdateOptions {
  /** Only touch the memory when it is in this scope (NOT_FOUND otherwise). */
  scope?: Scope;
  /** Why, for the history. @default 'manual edit' */
  reason?: string;
  /** Treat the edit as an activation and refresh updatedAt. @default false */
  refreshTimestamp?: boolean;
  /** What caused the change, for the history (the pipeline uses `review` and `extraction`). @default 'manual_edit' */
  trigger?: 'manual_edit' | 'review' | 'extraction';
  /** What the change did, for the history. @default 'edit' */
  action?: 'edit' | 'boost' | 'promote' | 'review';
}

export interface ScopedOptions {
  /** Only see the memory when it is in this scope (NOT_FOUND / undefined otherwise). */
  scope?: Scope;
}

export interface RenderOptions {
  scope?: Scope;
  filter?: MemoryFilter;
  /** Most memories read for the index (the most recently updated). @default 1000 */
  limit?: number;
}

/** The memory layer: what applications and adapters call. */
export interface Memory {
  readonly config: EngineConfig;
  readonly store: MemoryStore;
  readonly embedder: Embedder;
  readonly languageModel: LanguageModel | undefined;
  readonly clock: Clock;
  /** The prompts in use: the defaults with `createMemory({ prompts })` applied. */
  readonly prompts: Prompts;
  add(content: string, options?: AddOptions): Promise<AddResult>;
  search(query: string, options?: SearchOptions): Promise<SearchResult[]>;
  get(id: string, options?: ScopedOptions): Promise<MemoryRecord | undefined>;
  list(options?: ListOptions): Promise<MemoryRecord[]>;
  count(options?: { scope?: Scope; filter?: MemoryFilter }): Promise<number>;
  update(id: string, patch: UpdatePatch, options?: UpdateOptions): Promise<MemoryRecord>;
  delete(id: string, options?: ScopedOptions): Promise<void>;
  deleteAll(scope: Scope): Promise<number>;
  history(id: string, options?: ScopedOptions): Promise<MemoryVersion[]>;
  restore(id: string, version: number, options?: ScopedOptions & { reason?: string }): Promise<MemoryRecord>;
  maintain(options?: MaintainOptions): Promise<MaintenanceReport>;
  renderIndex(options?: RenderOptions): Promise<string>;
  renderContext(query?: string, options?: SearchOptions): Promise<string>;
  close(): Promise<void>;
}

const MAX_CONFLICT_RETRIES = 5;

/** The decision reported by `add(…, { merge: false })`. */
const VERBATIM_DECISION: UpdateDecision = {
  strategy: 'create_new',
  shouldRefreshTimestamp: false,
  shouldUpgradeLevel: false,
  reason: 'stored verbatim: merging was turned off for this add',
  similarity: 0,
};

/**
 * Build a Memory over an explicit store and embedder. Options are validated
 * at once (INVALID_OPTIONS names the field); the store is opened on first use.
 */
export function createMemory(options: CreateMemoryOptions): Memory {
  if (!options || typeof options !== 'object') {
    throw new MemloomError({ code: 'INVALID_OPTIONS', message: 'createMemory needs an options object with a store and an embedder' });
  }
  assertStore(options.store);
  assertEmbedder(options.embedder);
  if (options.languageModel !== undefined && typeof options.languageModel?.generate !== 'function') {
    throw new MemloomError({ code: 'INVALID_OPTIONS', message: 'languageModel must have a generate(request) method' });
  }
  const { store, embedder, languageModel, clock, generateId, scope, prompts, logger, ...config } = options;
  const engineConfig = parseOrThrow(engineConfigSchema, config, 'createMemory options');
  return new MemloomMemory({
    store,
    embedder,
    languageModel,
    clock: clock ?? systemClock,
    generateId: generateId ?? (() => crypto.randomUUID()),
    defaultScope: validateScope(scope, engineConfig.limits.maxScopeLength),
    prompts: { ...defaultPrompts, ...prompts },
    logger: logger ?? {},
    config: engineConfig,
  });
}

interface MemoryParts {
  store: MemoryStore;
  embedder: Embedder;
  languageModel: LanguageModel | undefined;
  clock: Clock;
  generateId: () => string;
  defaultScope: Scope;
  prompts: Prompts;
  logger: Logger;
  config: EngineConfig;
}

class MemloomMemory implements Memory {
  readonly config: EngineConfig;
  readonly store: MemoryStore;
  readonly embedder: Embedder;
  readonly languageModel: LanguageModel | undefined;
  readonly clock: Clock;
  readonly prompts: Prompts;
  private readonly generateId: () => string;
  private readonly defaultScope: Scope;
  private readonly logger: Logger;
  private readonly text: TextOperations;
  private readonly locks = new KeyedLock();
  private opening: Promise<void> | undefined;
  private closed = false;

  constructor(parts: MemoryParts) {
    this.config = parts.config;
    this.store = parts.store;
    this.embedder = parts.embedder;
    this.languageModel = parts.languageModel;
    this.clock = parts.clock;
    this.prompts = parts.prompts;
    this.generateId = parts.generateId;
    this.defaultScope = parts.defaultScope;
    this.logger = parts.logger;
    this.text = new TextOperations(parts.languageModel, parts.prompts, parts.config.modelTimeoutMs, parts.config.limits.maxContentLength);
  }

  private get freshness(): FreshnessConfig | undefined {
    return this.config.freshness === false ? undefined : this.config.freshness;
  }

  // -------------------------------------------------------------------------
  // add
  // -------------------------------------------------------------------------

  async add(content: string, options: AddOptions = {}): Promise<AddResult> {
    this.assertOpen();
    const parsed = parseOrThrow(addOptionsSchema, options, 'add options');
    const text = validateContent(content, this.config.limits.maxContentLength);
    const scope = this.resolveScope(parsed.scope);
    if (parsed.tags && parsed.tags.length > this.config.limits.maxTags) {
      throw new MemloomError({ code: 'INVALID_INPUT', message: `at most ${this.config.limits.maxTags} tags are allowed` });
    }
    const atMs = parsed.at === undefined ? this.clock.now() : toEpochMs(parsed.at);
    await this.ensureOpen();
    const vector = await this.embedOne(text, 'document');

    return this.locks.run(scopeKey(scope), async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await this.addOnce(text, vector, scope, parsed, atMs);
        } catch (error) {
          if (!MemloomError.hasCode(error, 'CONFLICT') || attempt >= MAX_CONFLICT_RETRIES) throw error;
          this.logger.debug?.('add: memory changed underneath, deciding again', { attempt });
        }
      }
    });
  }

  private async addOnce(
    text: string,
    vector: number[],
    scope: Scope,
    options: ReturnType<typeof addOptionsSchema.parse>,
    atMs: number,
  ): Promise<AddResult> {
    const atIso = new Date(atMs).toISOString();
    const trigger = options.trigger ?? 'user_mention';
    // Candidates: the same scope, and the same layer (facts and core facts merge; episodes and system memories only with their own kind).
    const category = options.category ?? this.config.defaults.category;
    const [nearestHit] =
      options.merge === false
        ? []
        : await this.store.vectorSearch({
            vector,
            scope,
            exactScope: true,
            filter: { category: mergeFamily(category) },
            limit: 1,
          });
    const nearest = nearestHit?.memory;
    const decision =
      options.merge === false
        ? { ...VERBATIM_DECISION }
        : decideUpdate(nearest ? { id: nearest.id, level: nearest.level, similarity: nearestHit.score } : undefined, this.config.strategy);

    if (nearest && decision.strategy === 'merge_update') {
      const merged = await this.text.merge(nearest.content, nearest.level, text);
      const mergedContent = validateContent(merged.text, this.config.limits.maxContentLength, 'merged content');
      const weight = boostedWeight(nearest.weight, 'merge_update', this.config.strategy);
      const after: MemoryRecord = {
        ...nearest,
        content: mergedContent,
        level: upgradedLevel(nearest.level, decision.similarity, this.config.strategy),
        weight,
        baseWeight: weight,
        baseImportance: Math.max(nearest.importance, options.importance ?? 0),
        importance: Math.max(nearest.importance, options.importance ?? 0),
        updatedAt: atIso,
        lastAccessedAt: atIso,
        source: options.source === 'user' ? 'user' : nearest.source,
        verified: nearest.verified || (options.verified ?? options.source === 'user'),
        sources: unique([...nearest.sources, ...(options.sources ?? [])]),
        tags: unique([...nearest.tags, ...(options.tags ?? [])]),
        metadata: { ...nearest.metadata, ...(options.metadata ?? {}) },
        revision: nearest.revision + 1,
      };
      const mergedVector = mergedContent === text ? vector : await this.embedOne(mergedContent, 'document');
      await this.store.apply([
        {
          op: 'put',
          memory: after,
          vector: mergedVector,
          expectedRevision: nearest.revision,
          version: versionOf(nearest, after, { trigger, action: 'merge', reason: decision.reason, atIso }),
        },
      ]);
      return { decision, memory: after, ...(merged.fallbackReason ? { modelFallback: merged.fallbackReason } : {}) };
    }

    const created = createRecord(
      {
        id: this.generateId(),
        content: text,
        scope,
        atIso,
        ...(options.category ? { category: options.category } : {}),
        ...(options.type ? { type: options.type } : {}),
        ...(options.importance !== undefined ? { importance: options.importance } : {}),
        ...(options.source ? { source: options.source } : {}),
        ...(options.verified !== undefined ? { verified: options.verified } : {}),
        ...(options.sources ? { sources: options.sources } : {}),
        ...(options.tags ? { tags: options.tags } : {}),
        ...(options.metadata ? { metadata: options.metadata } : {}),
      },
      this.config.defaults,
    );
    const changes: MemoryChange[] = [
      {
        op: 'put',
        memory: created,
        vector,
        expectedRevision: 0,
        version: versionOf(null, created, { trigger, action: 'create', reason: decision.reason, atIso }),
      },
    ];
    let boosted: MemoryRecord | undefined;
    if (nearest) {
      const weight = boostedWeight(nearest.weight, decision.strategy, this.config.strategy);
      if (weight !== nearest.weight) {
        const ageDays = daysBetween(nearest.updatedAt, atMs);
        boosted = {
          ...nearest,
          weight,
          baseWeight: baseWeightFor(weight, ageDays, this.config.decay.weightAlpha),
          revision: nearest.revision + 1,
        };
        const reason = `mentioned again at similarity ${decision.similarity.toFixed(3)} (${decision.strategy}): weight ${nearest.weight} -> ${weight}; content, level and timestamp unchanged`;
        changes.push({
          op: 'put',
          memory: boosted,
          expectedRevision: nearest.revision,
          version: versionOf(nearest, boosted, { trigger, action: 'boost', reason, atIso }),
        });
      }
    }
    await this.store.apply(changes);
    return { decision, memory: created, ...(boosted ? { boosted } : {}) };
  }

  // -------------------------------------------------------------------------
  // search
  // -------------------------------------------------------------------------

  async search(query: string, options: SearchOptions = {}): Promise<SearchResult[]> {
    this.assertOpen();
    const parsed = parseOrThrow(searchOptionsSchema, options, 'search options');
    const text = validateContent(query, this.config.limits.maxContentLength, 'query');
    const scope = this.resolveScope(parsed.scope);
    const limit = parsed.limit ?? this.config.retrieval.defaultLimit;
    await this.ensureOpen();
    const vector = await this.embedOne(text, 'query');
    const nowMs = this.clock.now();
    const retrieval = this.config.retrieval;
    const candidateLimit = Math.max(limit * retrieval.candidateMultiplier, retrieval.minCandidates);
    const filter = parsed.filter as MemoryFilter | undefined;
    const [vectorHits, textHits] = await Promise.all([
      this.store.vectorSearch({ vector, scope, ...(filter ? { filter } : {}), limit: candidateLimit }),
      this.store.capabilities.textSearch && this.store.textSearch
        ? this.store.textSearch({ text, scope, ...(filter ? { filter } : {}), limit: candidateLimit })
        : Promise.resolve([]),
    ]);
    const minScore = parsed.minScore ?? retrieval.minScore;
    const ranked = rankCandidates(vectorHits, textHits, { nowMs, config: retrieval, candidateLimit })
      .filter((hit) => hit.score >= minScore && inScope(hit.memory.scope, scope))
      .slice(0, limit);

    if (this.config.trackAccess && ranked.length > 0) {
      const atIso = new Date(nowMs).toISOString();
      await this.store.touch(
        ranked.map((hit) => hit.memory.id),
        atIso,
      );
      for (const hit of ranked) hit.memory = { ...hit.memory, lastAccessedAt: atIso };
    }
    return ranked.map((hit) => {
      const note = this.freshnessFor(hit.memory, nowMs);
      return { memory: hit.memory, score: hit.score, parts: hit.parts, ...(note ? { freshness: note } : {}) };
    });
  }

  // -------------------------------------------------------------------------
  // reads
  // -------------------------------------------------------------------------

  async get(id: string, options: ScopedOptions = {}): Promise<MemoryRecord | undefined> {
    this.assertOpen();
    validateId(id);
    const scope = this.resolveScope(options.scope);
    await this.ensureOpen();
    const memory = await this.store.get(id);
    return memory && inScope(memory.scope, scope) ? memory : undefined;
  }

  async list(options: ListOptions = {}): Promise<MemoryRecord[]> {
    this.assertOpen();
    const parsed = parseOrThrow(listOptionsSchema, options, 'list options');
    const scope = this.resolveScope(parsed.scope);
    await this.ensureOpen();
    return this.store.list({ ...parsed, scope, filter: parsed.filter as MemoryFilter | undefined });
  }

  async count(options: { scope?: Scope; filter?: MemoryFilter } = {}): Promise<number> {
    this.assertOpen();
    const parsed = parseOrThrow(listOptionsSchema, options, 'count options');
    const scope = this.resolveScope(parsed.scope);
    await this.ensureOpen();
    return this.store.count({ scope, ...(parsed.filter ? { filter: parsed.filter as MemoryFilter } : {}) });
  }

  async history(id: string, options: ScopedOptions = {}): Promise<MemoryVersion[]> {
    const memory = await this.requireMemory(id, options.scope);
    return this.store.history(memory.id);
  }

  // -------------------------------------------------------------------------
  // writes
  // -------------------------------------------------------------------------

  async update(id: string, patch: UpdatePatch, options: UpdateOptions = {}): Promise<MemoryRecord> {
    this.assertOpen();
    const parsed = parseOrThrow(updatePatchSchema, patch, 'update patch', 'INVALID_INPUT');
    parseOrThrow(updateOptionsSchema, { trigger: options.trigger, action: options.action }, 'update options');
    const content = parsed.content === undefined ? undefined : validateContent(parsed.content, this.config.limits.maxContentLength);
    if (parsed.tags && parsed.tags.length > this.config.limits.maxTags) {
      throw new MemloomError({ code: 'INVALID_INPUT', message: `at most ${this.config.limits.maxTags} tags are allowed` });
    }
    const current = await this.requireMemory(id, options.scope);
    const nowMs = this.clock.now();
    const atIso = new Date(nowMs).toISOString();
    const updatedAt = options.refreshTimestamp ? atIso : current.updatedAt;
    const ageDays = daysBetween(updatedAt, nowMs);
    const next: MemoryRecord = {
      ...current,
      ...(content !== undefined ? { content } : {}),
      ...(parsed.category ? { category: parsed.category } : {}),
      ...(parsed.type ? { type: parsed.type } : {}),
      ...(parsed.level ? { level: parsed.level } : {}),
      ...(parsed.verified !== undefined ? { verified: parsed.verified } : {}),
      ...(parsed.sources ? { sources: unique(parsed.sources) } : {}),
      ...(parsed.tags ? { tags: unique(parsed.tags) } : {}),
      ...(parsed.metadata ? { metadata: parsed.metadata } : {}),
      updatedAt,
      revision: current.revision + 1,
    };
    if (parsed.weight !== undefined || options.refreshTimestamp) {
      next.weight = parsed.weight ?? current.weight;
      next.baseWeight = baseWeightFor(next.weight, ageDays, this.config.decay.weightAlpha);
    }
    if (parsed.importance !== undefined || options.refreshTimestamp) {
      next.importance = parsed.importance ?? current.importance;
      // Importance decays in whole periods; the base is the value at updatedAt.
      next.baseImportance = options.refreshTimestamp ? next.importance : baseImportanceFor(next, ageDays, this.config.decay);
    }
    const vector = content !== undefined && content !== current.content ? await this.embedOne(content, 'document') : undefined;
    await this.store.apply([
      {
        op: 'put',
        memory: next,
        ...(vector ? { vector } : {}),
        expectedRevision: current.revision,
        version: versionOf(current, next, {
          trigger: options.trigger ?? 'manual_edit',
          action: options.action ?? 'edit',
          reason: options.reason ?? 'manual edit',
          atIso,
        }),
      },
    ]);
    return next;
  }

  async delete(id: string, options: ScopedOptions = {}): Promise<void> {
    const memory = await this.requireMemory(id, options.scope);
    await this.store.apply([{ op: 'delete', id: memory.id }]);
  }

  async deleteAll(scope: Scope): Promise<number> {
    this.assertOpen();
    const clean = validateScope(scope, this.config.limits.maxScopeLength);
    if (isEmptyScope(clean)) {
      throw new MemloomError({
        code: 'INVALID_SCOPE',
        message: 'deleteAll needs a scope with at least one of userId, agentId or sessionId',
      });
    }
    await this.ensureOpen();
    return this.store.deleteByScope(clean);
  }

  async restore(id: string, version: number, options: ScopedOptions & { reason?: string } = {}): Promise<MemoryRecord> {
    if (!Number.isInteger(version) || version < 1) {
      throw new MemloomError({ code: 'INVALID_INPUT', message: `version must be a positive integer, got ${String(version)}` });
    }
    const current = await this.requireMemory(id, options.scope);
    const versions = await this.store.history(current.id);
    const target = versions.find((entry) => entry.version === version);
    if (!target) {
      throw new MemloomError({
        code: 'VERSION_NOT_FOUND',
        message: `memory ${id} has no version ${version} (it has ${versions.length})`,
        details: { id, version, available: versions.length },
      });
    }
    const atIso = new Date(this.clock.now()).toISOString();
    const next: MemoryRecord = {
      ...structuredClone(target.after),
      id: current.id,
      scope: current.scope,
      createdAt: current.createdAt,
      lastAccessedAt: current.lastAccessedAt,
      revision: current.revision + 1,
    };
    const vector = next.content !== current.content ? await this.embedOne(next.content, 'document') : undefined;
    await this.store.apply([
      {
        op: 'put',
        memory: next,
        ...(vector ? { vector } : {}),
        expectedRevision: current.revision,
        version: versionOf(current, next, {
          trigger: 'restore',
          action: 'restore',
          reason: options.reason ?? `restored version ${version}`,
          atIso,
        }),
      },
    ]);
    return next;
  }

  async maintain(options: MaintainOptions = {}): Promise<MaintenanceReport> {
    this.assertOpen();
    await this.ensureOpen();
    const scope = this.resolveScope(options.scope);
    const nowMs = options.now === undefined ? this.clock.now() : toEpochMs(options.now);
    return runMaintenance({
      store: this.store,
      text: this.text,
      config: this.config.decay,
      nowMs,
      scope,
      dryRun: options.dryRun ?? false,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
  }

  // -------------------------------------------------------------------------
  // rendering
  // -------------------------------------------------------------------------

  async renderIndex(options: RenderOptions = {}): Promise<string> {
    this.assertOpen();
    const scope = this.resolveScope(options.scope);
    await this.ensureOpen();
    const memories = await this.store.list({
      scope,
      ...(options.filter ? { filter: options.filter } : {}),
      limit: options.limit ?? 1000,
      orderBy: 'updatedAt',
      direction: 'desc',
    });
    return renderIndex(memories, { nowMs: this.clock.now(), freshness: this.freshness });
  }

  async renderContext(query?: string, options: SearchOptions = {}): Promise<string> {
    if (query === undefined || query.trim() === '') {
      return this.renderIndex({ ...(options.scope ? { scope: options.scope } : {}), ...(options.filter ? { filter: options.filter } : {}) });
    }
    const results = await this.search(query, options);
    return renderContextBlock(
      results.map((result) => result.memory),
      { nowMs: this.clock.now(), freshness: this.freshness },
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.store.close();
    await this.embedder.close?.();
  }

  // -------------------------------------------------------------------------
  // helpers
  // -------------------------------------------------------------------------

  private assertOpen(): void {
    if (this.closed) throw new MemloomError({ code: 'CLOSED', message: 'this memory was closed' });
  }

  private ensureOpen(): Promise<void> {
    if (!this.opening) {
      this.opening = this.store.open({ dimension: this.embedder.dimension, embedderId: this.embedder.id }).catch((error: unknown) => {
        this.opening = undefined;
        throw error;
      });
    }
    return this.opening;
  }

  private resolveScope(scope: unknown): Scope {
    const given = validateScope(scope, this.config.limits.maxScopeLength);
    return { ...this.defaultScope, ...given };
  }

  private async requireMemory(id: string, scope: Scope | undefined): Promise<MemoryRecord> {
    this.assertOpen();
    validateId(id);
    const resolved = this.resolveScope(scope);
    await this.ensureOpen();
    const memory = await this.store.get(id);
    if (!memory || !inScope(memory.scope, resolved)) {
      throw new MemloomError({ code: 'NOT_FOUND', message: `no memory with id ${id}${isEmptyScope(resolved) ? '' : ' in this scope'}`, details: { id } });
    }
    return memory;
  }

  private async embedOne(text: string, purpose: 'document' | 'query'): Promise<number[]> {
    let vectors: unknown;
    try {
      vectors = await this.embedder.embed([text], { purpose });
    } catch (error) {
      throw toMemloomError(error, { code: 'EMBEDDER_ERROR', backend: 'embeddings', message: `embedder ${this.embedder.id} failed` });
    }
    if (!Array.isArray(vectors) || vectors.length !== 1) {
      throw new MemloomError({
        code: 'INVALID_EMBEDDING',
        message: `embedder ${this.embedder.id} returned ${Array.isArray(vectors) ? vectors.length : 'no'} vectors for 1 text`,
      });
    }
    const vector = vectors[0];
    assertValidVector(vector, this.embedder.dimension, `embedder ${this.embedder.id}`);
    return Array.from(vector);
  }

  private freshnessFor(memory: MemoryRecord, nowMs: number): string {
    const freshness = this.freshness;
    if (!freshness) return '';
    return freshnessNote(Date.parse(memory.updatedAt), freshnessThresholdMs(memory.type, freshness), nowMs);
  }
}

/** Categories a new memory of `category` may merge with. */
function mergeFamily(category: MemoryRecord['category']): MemoryRecord['category'][] {
  return category === 'fact' || category === 'core' ? ['fact', 'core'] : [category];
}

function assertStore(store: unknown): asserts store is MemoryStore {
  const candidate = store as Partial<MemoryStore> | undefined;
  const required = ['open', 'get', 'getMany', 'list', 'count', 'vectorSearch', 'apply', 'deleteByScope', 'history', 'getVector', 'touch', 'close'] as const;
  const missing = candidate ? required.filter((name) => typeof candidate[name] !== 'function') : required;
  if (!candidate || missing.length > 0 || typeof candidate.capabilities !== 'object') {
    throw new MemloomError({
      code: 'INVALID_OPTIONS',
      message: `store is not a MemoryStore${missing.length > 0 ? ` (missing ${missing.join(', ')})` : ' (no capabilities)'}`,
    });
  }
}

function assertEmbedder(embedder: unknown): asserts embedder is Embedder {
  const candidate = embedder as Partial<Embedder> | undefined;
  if (!candidate || typeof candidate.embed !== 'function' || typeof candidate.id !== 'string') {
    throw new MemloomError({ code: 'INVALID_OPTIONS', message: 'embedder must have an id and an embed(texts) method' });
  }
  if (!Number.isInteger(candidate.dimension) || (candidate.dimension as number) <= 0) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', message: `embedder.dimension must be a positive integer, got ${String(candidate.dimension)}` });
  }
}
