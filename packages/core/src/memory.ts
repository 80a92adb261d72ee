import { checkedSignal } from './abort-signal.js';
import { systemClock, type Clock, type Embedder, type LanguageModel, type MemoryStore } from './contracts.js';
import type { FreshnessConfig } from './config.js';
import { baseImportanceFor, baseWeightFor, currentValues, daysBetween } from './decay.js';
import { describeValue, MemloomError } from './errors.js';
import { freshnessNote, freshnessThresholdMs } from './freshness.js';
import { timeOrderedId } from './ids.js';
import { KeyedLock } from './keyed-lock.js';
import { applyMention } from './mention.js';
import type {
  AddOptions,
  AddResult,
  AddTurn,
  AddTurnsOptions,
  CreateMemoryOptions,
  ListOptions,
  Logger,
  RestoreOptions,
  Memory,
  RenderContextOptions,
  RenderOptions,
  ScopedOptions,
  DeleteOptions,
  SearchOptions,
  SearchResult,
  UpdateOptions,
  UpdatePatch,
} from './memory-types.js';
import { runMaintenance, type MaintainOptions, type MaintenanceReport } from './maintenance.js';
import {
  addOptionsSchema,
  addTurnsOptionsSchema,
  assertNotFuture,
  engineConfigSchema,
  listOptionsSchema,
  renderOptionsSchema,
  checkedClock,
  parseOrThrow,
  restoreOptionsSchema,
  searchOptionsSchema,
  toEpochMs,
  turnSchema,
  updateOptionsSchema,
  deleteOptionsSchema,
  updatePatchSchema,
  type EngineConfig,
  type ParsedAddOptions,
} from './options.js';
import { policySchema, type Policy, type PolicyOverrides } from './policy.js';
import { defaultPrompts, type Prompts } from './prompts.js';
import { recentNotes } from './recent-notes.js';
import { unique, validateContent, validateId, versionOf } from './records.js';
import { indexLineText, renderContextBlock, renderIndex, renderIndexBlock } from './render.js';
import { rankCandidates } from './retrieval.js';
import { inScope, isEmptyScope, scopeDescription, scopeKey, validateScope } from './scope.js';
import { TextOperations } from './text-operations.js';
import { periodNamedIn } from './text/query-dates.js';
import { withoutChineseDiscourse } from './text/query-text.js';
import { weighWeakMatches } from './text/weak-matches.js';
import type { MemoryFilter, MemoryRecord, MemoryVersion, Scope } from './types.js';
import { contentAndContextVectors, documentVectors, embedChecked } from './vector.js';

const MAX_CONFLICT_RETRIES = 5;

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
  // Strict: a misspelt section (`stratgy`) would otherwise be dropped and its defaults used without a word.
  const engineConfig = parseOrThrow(engineConfigSchema.strict(), config, 'createMemory options');
  // Seed 001's retrieve_limit is how many results a search returns, unless retrieval.defaultLimit says otherwise.
  if (config.retrieval?.defaultLimit === undefined && config.policy?.retrieve_limit !== undefined) engineConfig.retrieval.defaultLimit = engineConfig.policy.retrieve_limit;
  const time = checkedClock(clock, systemClock, 'createMemory({ clock })');
  return new MemloomMemory({
    store,
    embedder,
    languageModel,
    clock: time,
    // Time-ordered UUIDs (version 7) at the memory's clock: a store's id index grows at one end.
    generateId: generateId ?? (() => timeOrderedId(time.now())),
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

/** Turns of one `addTurns` call embedded per embedder call. */
const TURNS_PER_EMBEDDING = 32;

/** The vector of an add's content, and of its context when that moves the stored vector. */
type AddVectors = [vector: number[], contextVector?: number[]];

/** An `add` whose input was checked. */
interface CheckedAdd {
  parsed: ParsedAddOptions;
  text: string;
  scope: Scope;
  atMs: number;
  context: string | undefined;
}

/** `addTurns`' `contextTurns` when none is given: each turn keeps the 2 turns before it as its context. */
export const DEFAULT_CONTEXT_TURNS = 2;

/** What `search` and `renderContext` read of a scope's stored policy overrides (`storedPolicy`). */
type StoredPolicy = Partial<Pick<Policy, 'retrieve_limit' | 'recent_days'>>;

class MemloomMemory implements Memory {
  readonly config: EngineConfig;
  readonly store: MemoryStore;
  readonly embedder: Embedder;
  readonly languageModel: LanguageModel | undefined;
  readonly clock: Clock;
  readonly prompts: Prompts;
  private readonly generateId: () => string;
  readonly defaultScope: Scope;
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
    return this.addChecked(this.checkAdd(content, options));
  }

  async addTurns(turns: readonly (string | AddTurn)[], options: AddTurnsOptions = {}): Promise<AddResult[]> {
    this.assertOpen();
    if (!Array.isArray(turns)) throw new MemloomError({ code: 'INVALID_INPUT', message: 'addTurns takes an array of turns' });
    const { contextTurns = DEFAULT_CONTEXT_TURNS, skip = 0, onProgress, ...common } = parseOrThrow(addTurnsOptionsSchema, options, 'addTurns options');
    const inputs = turns.map((turn, index) => {
      const parsed = parseOrThrow(turnSchema, turn, `turn ${index}`, 'INVALID_INPUT');
      return typeof parsed === 'string' ? { content: parsed } : parsed;
    });
    const limit = this.config.limits.maxContentLength;
    // Every turn is checked before the first is stored.
    const checked = inputs.map(({ content, ...fields }, index) => {
      // The nearest turns, cut to the context limit from their start.
      const context = inputs
        .slice(Math.max(0, index - contextTurns), index)
        .map((before) => before.content.trim())
        .join('\n')
        .slice(-limit);
      // Parsed again by checkAdd, which also checks the scope.
      const turnOptions = { ...common, ...fields, ...(context.trim() ? { context } : {}) } as AddOptions;
      return this.checkAdd(content, turnOptions, `turn ${index}`);
    });
    if (skip > checked.length) {
      throw new MemloomError({ code: 'INVALID_INPUT', message: `addTurns: skip is ${skip}, more than the ${checked.length} turns given` });
    }
    // Turns stored by an earlier, interrupted call only give the turns after them their context.
    const toStore = checked.slice(skip);
    const { signal } = common;
    signal?.throwIfAborted();
    await this.ensureOpen();
    const results: AddResult[] = [];
    // Turns are embedded a batch at a time (one embedder call), then added one by one, in order. Each add checks
    // the signal before it writes: an abort stops between turns, or inside one's model call, never half-way through a write.
    for (let start = 0; start < toStore.length; start += TURNS_PER_EMBEDDING) {
      const batch = toStore.slice(start, start + TURNS_PER_EMBEDDING);
      const vectors = await this.embedAdds(batch, signal);
      for (const [index, turn] of batch.entries()) {
        const result = await this.addChecked(turn, vectors[index]);
        results.push(result);
        await onProgress?.(results.length, toStore.length, result);
      }
    }
    return results;
  }

  /** `add`'s checks of its input, before anything is embedded or stored. */
  private checkAdd(content: string, options: AddOptions, what?: string): CheckedAdd {
    const parsed = parseOrThrow(addOptionsSchema, options, what ? `${what}: add options` : 'add options');
    const text = validateContent(content, this.config.limits.maxContentLength, what ? `${what}: content` : 'content');
    const scope = this.resolveScope(parsed.scope);
    if (parsed.tags && parsed.tags.length > this.config.limits.maxTags) {
      throw new MemloomError({ code: 'INVALID_INPUT', message: `at most ${this.config.limits.maxTags} tags are allowed` });
    }
    const nowMs = this.clock.now();
    const atMs = parsed.at === undefined ? nowMs : toEpochMs(parsed.at);
    assertNotFuture(atMs, nowMs, what ? `${what}: at` : 'at');
    const context = parsed.context?.trim() ? validateContent(parsed.context, this.config.limits.maxContentLength, 'context') : undefined;
    return { parsed, text, scope, atMs, context };
  }

  /** The vectors of checked adds' content and context (the context only when it moves the vector), in one embedder call. */
  private embedAdds(adds: readonly CheckedAdd[], signal: AbortSignal | undefined): Promise<AddVectors[]> {
    const memories = adds.map((add) => ({ content: add.text, context: add.context }));
    return contentAndContextVectors(this.embedder, memories, this.config.retrieval.contextWeight, signal);
  }

  private async addChecked(checked: CheckedAdd, given?: AddVectors): Promise<AddResult> {
    const { parsed, text, scope, atMs, context } = checked;
    const { signal } = parsed;
    signal?.throwIfAborted();
    await this.ensureOpen();
    const [vector, contextVector] = given ?? ((await this.embedAdds([checked], signal))[0] as AddVectors);

    return this.locks.run(scopeKey(scope), async () => {
      for (let attempt = 0; ; attempt++) {
        // Again once the scope's lock is ours (another add may have held it long): nothing is decided or written after an abort.
        signal?.throwIfAborted();
        try {
          return await this.addOnce(text, vector, context, contextVector, scope, parsed, atMs);
        } catch (error) {
          if (!MemloomError.hasCode(error, 'CONFLICT') || attempt >= MAX_CONFLICT_RETRIES) throw error;
          this.logger.debug?.('add: memory changed underneath, deciding again', { attempt });
        }
      }
    });
  }

  private addOnce(
    text: string,
    vector: number[],
    context: string | undefined,
    contextVector: number[] | undefined,
    scope: Scope,
    options: ParsedAddOptions,
    atMs: number,
  ): Promise<AddResult> {
    return applyMention(
      {
        store: this.store,
        config: this.config,
        text: this.text,
        generateId: this.generateId,
        embed: (text, role) => this.embedOne(text, 'document', options.signal, role === 'context'),
      },
      { text, vector, ...(context ? { context } : {}), ...(contextVector ? { contextVector } : {}), scope, options, atMs },
    );
  }

  // -------------------------------------------------------------------------
  // search
  // -------------------------------------------------------------------------

  async search(query: string, options: SearchOptions = {}): Promise<SearchResult[]> {
    return this.searchWith(query, options);
  }

  /** `search`, given the scope's stored overrides when the caller read them already (renderContext: one read, one warning). */
  private async searchWith(query: string, options: SearchOptions, stored?: StoredPolicy): Promise<SearchResult[]> {
    this.assertOpen();
    const parsed = parseOrThrow(searchOptionsSchema, options, 'search options');
    const text = validateContent(query, this.config.limits.maxContentLength, 'query');
    const scope = this.resolveScope(parsed.scope);
    const { signal } = parsed;
    signal?.throwIfAborted();
    const limit = parsed.limit ?? (stored ?? (await this.storedPolicy(scope))).retrieve_limit ?? this.config.retrieval.defaultLimit;
    await this.ensureOpen();
    const vector = await this.embedOne(text, 'query', signal);
    const nowMs = this.clock.now();
    const retrieval = this.config.retrieval;
    const filter = parsed.filter as MemoryFilter | undefined;
    // Every memory `ids` names is a candidate of both lists, so each is scored by its own cosine and BM25.
    const candidateLimit = Math.max(Math.ceil(limit * retrieval.candidateMultiplier), retrieval.minCandidates, filter?.ids ? new Set(filter.ids).size : 0);
    const textSearch = this.store.capabilities.textSearch ? this.store.textSearch?.bind(this.store) : undefined;
    // Keywords: the query without the Chinese words that only frame it in a message
    // (对了，… / …你还记得吗？), which would otherwise match memories through 记, 还 or 一下.
    const keywordQuery = withoutChineseDiscourse(text);
    const [vectorHits, keywordHits, bestTextHits] = await Promise.all([
      this.store.vectorSearch({ vector, scope, ...(filter ? { filter } : {}), limit: candidateLimit }),
      textSearch ? textSearch({ text: keywordQuery, scope, ...(filter ? { filter } : {}), limit: candidateLimit }) : [],
      // With `ids`, the keyword part is normalised by the best match without them, as a search without them is.
      textSearch && filter?.ids ? textSearch({ text: keywordQuery, scope, ...withoutIds(filter), limit: 1 }) : [],
    ]);
    const minScore = parsed.minScore ?? retrieval.minScore;
    // Normalised by the best BM25 as the store scored it, so that a memory met only through a character of a
    // Chinese word (子 of 孩子 in 疹子) keeps its cut even when it is the best match.
    const bestText = keywordHits.reduce((best, hit) => Math.max(best, hit.score), bestTextHits[0]?.score ?? 0);
    const textHits = weighWeakMatches(keywordHits, keywordQuery);
    // A day or month the query names ("in May 2023"): memories created then rank higher (the date part).
    const period = periodNamedIn(text);
    const ranked = rankCandidates(vectorHits, textHits, {
      nowMs,
      config: retrieval,
      candidateLimit,
      ...(bestText > 0 ? { bestText } : {}),
      ...(period ? { period } : {}),
    })
      .filter((hit) => hit.score >= minScore && inScope(hit.memory.scope, scope))
      .slice(0, limit);

    // Before the one write a search makes (lastAccessedAt): an abort during the reads writes nothing.
    signal?.throwIfAborted();
    if (this.config.trackAccess && ranked.length > 0) {
      const atIso = new Date(nowMs).toISOString();
      const recorded = await this.store.touch(
        ranked.map((hit) => hit.memory.id),
        atIso,
      );
      // A store that may not write recorded nothing: the results keep the times it holds.
      if (recorded !== false) for (const hit of ranked) hit.memory = { ...hit.memory, lastAccessedAt: atIso };
    }
    return ranked.map((hit) => {
      const note = this.freshnessFor(hit.memory, nowMs);
      return { memory: hit.memory, score: hit.score, parts: hit.parts, ...(note ? { freshness: note } : {}) };
    });
  }

  /**
   * Seed 001's order, configuration first, then the workspace overrides file: the `retrieve_limit` and
   * `recent_days` of the scope's stored overrides (a store with `policyStorage`, such as Markdown), read on every
   * search and `renderContext` so that an evolved value applies at once and deleting the file rolls back. Each
   * value is checked alone: a file that cannot be read or a value out of range is warned of (logger) and left
   * out, so the configured value holds and reads go on; the pipeline, which writes the file, refuses it.
   */
  private async storedPolicy(scope: Scope): Promise<StoredPolicy> {
    if (!this.store.policyStorage) return {};
    let overrides: unknown;
    try {
      overrides = await this.store.policyStorage(scope).readOverrides();
    } catch (error) {
      this.logger.warn?.(`the stored policy overrides were not read (the configured policy holds): ${MemloomError.isInstance(error) ? error.reason : String(error)}`);
      return {};
    }
    if (overrides === undefined || overrides === null || typeof overrides !== 'object') return {};
    const stored: StoredPolicy = {};
    for (const key of ['retrieve_limit', 'recent_days'] as const) {
      const value = (overrides as PolicyOverrides)[key];
      if (value === undefined) continue;
      const checked = policySchema.shape[key].safeParse(value);
      if (checked.success) stored[key] = checked.data;
      else this.logger.warn?.(`the stored policy overrides' ${key} ${describeValue(value)} is left out (the configured value holds): ${checked.error.issues[0]?.message ?? 'not valid'}`);
    }
    return stored;
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
    if (parsed.after && !this.store.capabilities.listAfter) {
      throw new MemloomError({ code: 'NOT_SUPPORTED', backend: this.store.name, message: 'list: this store does not take after; page by offset' });
    }
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
    const { reason, signal } = parseOrThrow(
      updateOptionsSchema,
      { reason: options.reason, trigger: options.trigger, action: options.action, expectedRevision: options.expectedRevision, signal: options.signal },
      'update options',
    );
    const content = parsed.content === undefined ? undefined : validateContent(parsed.content, this.config.limits.maxContentLength);
    // A context of null or only whitespace removes it.
    const context =
      parsed.context === undefined ? undefined : parsed.context?.trim() ? validateContent(parsed.context, this.config.limits.maxContentLength, 'context') : null;
    if (parsed.tags && parsed.tags.length > this.config.limits.maxTags) {
      throw new MemloomError({ code: 'INVALID_INPUT', message: `at most ${this.config.limits.maxTags} tags are allowed` });
    }
    const current = await this.requireMemory(id, options.scope, signal);
    assertRevision(current, options.expectedRevision);
    const nowMs = this.clock.now();
    const atIso = new Date(nowMs).toISOString();
    const updatedAt = options.refreshTimestamp ? atIso : current.updatedAt;
    const ageDays = daysBetween(updatedAt, nowMs);
    const { context: currentContext, ...unchanged } = current;
    const keptContext = context === undefined ? currentContext : (context ?? undefined);
    const next: MemoryRecord = {
      ...unchanged,
      ...(content !== undefined ? { content } : {}),
      ...(keptContext ? { context: keptContext } : {}),
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
    // A refreshed timestamp restarts decay from the values the rules give the memory now.
    const decayed = options.refreshTimestamp ? currentValues(current, nowMs, this.config.decay) : current;
    if (parsed.weight !== undefined || options.refreshTimestamp) {
      next.weight = parsed.weight ?? decayed.weight;
      next.baseWeight = baseWeightFor(next.weight, ageDays, this.config.decay.weightAlpha);
    }
    if (parsed.importance !== undefined || options.refreshTimestamp) {
      next.importance = parsed.importance ?? decayed.importance;
      // Importance decays in whole periods; the base is the value at updatedAt.
      next.baseImportance = options.refreshTimestamp ? next.importance : baseImportanceFor(next, ageDays, this.config.decay);
    }
    const vector = next.content !== current.content || next.context !== current.context ? await this.embedRecord(next, signal) : undefined;
    // Again before writing: an abort while the new text was embedded writes nothing.
    signal?.throwIfAborted();
    await this.store.apply([
      {
        op: 'put',
        memory: next,
        ...(vector ? { vector } : {}),
        expectedRevision: current.revision,
        version: versionOf(current, next, {
          trigger: options.trigger ?? 'manual_edit',
          action: options.action ?? 'edit',
          reason: reason ?? 'manual edit',
          atIso,
        }),
      },
    ]);
    return next;
  }

  async delete(id: string, options: DeleteOptions = {}): Promise<void> {
    parseOrThrow(deleteOptionsSchema, { expectedRevision: options.expectedRevision }, 'delete options');
    const memory = await this.requireMemory(id, options.scope);
    const { expectedRevision } = options;
    assertRevision(memory, expectedRevision);
    // With an expected revision, the store checks it again as it deletes: a change in between is a CONFLICT too.
    await this.store.apply([{ op: 'delete', id: memory.id, ...(expectedRevision === undefined ? {} : { expectedRevision }) }]);
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

  async restore(id: string, version: number, options: RestoreOptions = {}): Promise<MemoryRecord> {
    if (!Number.isInteger(version) || version < 1) {
      throw new MemloomError({ code: 'INVALID_INPUT', message: `version must be a positive integer, got ${describeValue(version)}` });
    }
    const { reason, signal } = parseOrThrow(restoreOptionsSchema, { reason: options.reason, signal: options.signal }, 'restore options');
    const current = await this.requireMemory(id, options.scope, signal);
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
    const vector = next.content !== current.content || next.context !== current.context ? await this.embedRecord(next, signal) : undefined;
    // Again before writing: an abort while the new text was embedded writes nothing.
    signal?.throwIfAborted();
    await this.store.apply([
      {
        op: 'put',
        memory: next,
        ...(vector ? { vector } : {}),
        expectedRevision: current.revision,
        version: versionOf(current, next, {
          trigger: 'restore',
          action: 'restore',
          reason: reason ?? `restored version ${version}`,
          atIso,
        }),
      },
    ]);
    return next;
  }

  async maintain(options: MaintainOptions = {}): Promise<MaintenanceReport> {
    this.assertOpen();
    const scope = this.resolveScope(options.scope);
    const nowMs = options.now === undefined ? this.clock.now() : toEpochMs(options.now);
    const { changesLimit } = options;
    if (changesLimit !== undefined && (!Number.isInteger(changesLimit) || changesLimit < 0)) {
      throw new MemloomError({ code: 'INVALID_OPTIONS', message: `maintain: changesLimit must be an integer of at least 0, not ${describeValue(changesLimit)}` });
    }
    const signal = checkedSignal(options.signal, 'maintain');
    signal?.throwIfAborted();
    await this.ensureOpen();
    return runMaintenance({
      store: this.store,
      text: this.text,
      config: this.config.decay,
      nowMs,
      scope,
      dryRun: options.dryRun ?? false,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.onScan ? { onScan: options.onScan } : {}),
      ...(changesLimit !== undefined ? { changesLimit } : {}),
      ...(signal ? { signal } : {}),
    });
  }

  // -------------------------------------------------------------------------
  // rendering
  // -------------------------------------------------------------------------

  async renderIndex(options: RenderOptions = {}): Promise<string> {
    this.assertOpen();
    const parsed = parseOrThrow(renderOptionsSchema, options, 'renderIndex options');
    const scope = this.resolveScope(parsed.scope);
    await this.ensureOpen();
    const memories = await this.store.list({
      scope,
      ...(parsed.filter ? { filter: parsed.filter } : {}),
      limit: parsed.limit ?? 1000,
      orderBy: 'updatedAt',
      direction: 'desc',
    });
    return renderIndex(memories, { nowMs: this.clock.now(), freshness: this.freshness });
  }

  async renderContext(query?: string, options: RenderContextOptions = {}): Promise<string> {
    const { recentDays: given, ...searchOptions } = options ?? {};
    if (query === undefined || query.trim() === '') {
      // No search to pass it to: the index is read at once, so the signal is only checked.
      checkedSignal(searchOptions.signal, 'renderContext')?.throwIfAborted();
      const index = await this.renderIndex({ ...(searchOptions.scope ? { scope: searchOptions.scope } : {}), ...(searchOptions.filter ? { filter: searchOptions.filter } : {}) });
      return renderIndexBlock(index);
    }
    // The notes first: a bad recentDays is refused before the search writes access times.
    const stored = given === undefined ? await this.storedPolicy(this.resolveScope(searchOptions.scope)) : undefined;
    const recentDays = given ?? stored?.recent_days ?? this.config.policy.recent_days;
    const notes = await recentNotes(this, {
      days: recentDays,
      ...(searchOptions.scope ? { scope: searchOptions.scope } : {}),
      ...(searchOptions.filter ? { filter: searchOptions.filter } : {}),
    });
    const results = (await this.searchWith(query, searchOptions, stored)).map((result) => result.memory);
    const shown = new Set(results.map((record) => record.id));
    // A note is shown as an index line is, cut to 200 characters: the notes (at most MAX_RECENT_NOTES) do not count in the limit.
    const shownNotes = notes.filter((note) => !shown.has(note.id)).map((note) => ({ ...note, content: indexLineText(note.content) }));
    return renderContextBlock([...results, ...shownNotes], { nowMs: this.clock.now(), freshness: this.freshness });
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

  /** The memory with this id in scope, or NOT_FOUND; an aborted `signal` (checked once the id and scope are) reads nothing. */
  private async requireMemory(id: string, scope: Scope | undefined, signal?: AbortSignal): Promise<MemoryRecord> {
    this.assertOpen();
    validateId(id);
    const resolved = this.resolveScope(scope);
    signal?.throwIfAborted();
    await this.ensureOpen();
    const memory = await this.store.get(id);
    if (!memory || !inScope(memory.scope, resolved)) {
      const where = isEmptyScope(resolved) ? '' : ` in the scope ${scopeDescription(resolved)}`;
      throw new MemloomError({ code: 'NOT_FOUND', message: `no memory with id ${id}${where}`, details: { id, scope: resolved } });
    }
    return memory;
  }

  /** The vector a store keeps for a record: its content's, blended with its context's. */
  private async embedRecord(record: Pick<MemoryRecord, 'content' | 'context'>, signal: AbortSignal | undefined): Promise<number[]> {
    return (await documentVectors(this.embedder, [record], this.config.retrieval.contextWeight, signal))[0] as number[];
  }

  private async embedOne(text: string, purpose: 'document' | 'query', signal?: AbortSignal, mayBeZero = false): Promise<number[]> {
    return (await embedChecked(this.embedder, [text], purpose, signal, () => mayBeZero))[0] as number[];
  }

  private freshnessFor(memory: MemoryRecord, nowMs: number): string {
    const freshness = this.freshness;
    if (!freshness) return '';
    return freshnessNote(Date.parse(memory.updatedAt), freshnessThresholdMs(memory.type, freshness), nowMs);
  }
}

/** A store query's filter without `ids` (no filter when nothing else is left). */
function withoutIds(filter: MemoryFilter): { filter?: MemoryFilter } {
  const { ids: _ids, ...rest } = filter;
  return Object.keys(rest).length > 0 ? { filter: rest } : {};
}

/** A change computed from a record read earlier: CONFLICT, nothing written, when the memory moved on since. */
function assertRevision(current: MemoryRecord, expected: number | undefined): void {
  if (expected !== undefined && current.revision !== expected) {
    throw new MemloomError({
      code: 'CONFLICT',
      message: `memory ${current.id} is at revision ${current.revision}, not ${expected}: it changed since it was read`,
    });
  }
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
    throw new MemloomError({ code: 'INVALID_OPTIONS', message: `embedder.dimension must be a positive integer, got ${describeValue(candidate.dimension)}` });
  }
}
