import type { MemoryChange, MemoryStore, VectorQuery } from './contracts.js';
import { baseWeightFor, currentValues, daysBetween } from './decay.js';
import { MemloomError } from './errors.js';
import type { AddResult } from './memory-types.js';
import type { EngineConfig, ParsedAddOptions } from './options.js';
import { addedBy, createRecord, lastWrittenVersion, mergeTags, unique, validateContent, versionOf } from './records.js';
import { laterIso } from './time-text.js';
import type { TextOperations } from './text-operations.js';
import type { MemoryLevel, MemoryRecord, Scope, ScoredMemory } from './types.js';
import { boostedWeight, decideUpdate, shownSimilarity, upgradedLevel, type UpdateDecision } from './update-strategy.js';
import { blendVectors } from './vector.js';

/** What applying a mention needs from the Memory that owns it. */
export interface MentionDeps {
  store: MemoryStore;
  config: EngineConfig;
  text: TextOperations;
  generateId: () => string;
  /** Embed a document (a merge's new text, or an older context it keeps), with the add's signal. */
  embed: (text: string, role: 'content' | 'context') => Promise<number[]>;
}

export interface MentionInput {
  /** Validated, trimmed content. */
  text: string;
  /** The content's vector: finds the nearest memory and decides merge / keep both / new. */
  vector: number[];
  /** `add(…, { context })`, validated and trimmed: kept on the memory and in its keyword index. */
  context?: string;
  /** The context's vector: blended into the vector that is stored, and into the one the nearest memory is also looked for with. */
  contextVector?: number[];
  scope: Scope;
  options: ParsedAddOptions;
  atMs: number;
}

/** The decision reported by `add(…, { merge: false })`. */
const VERBATIM_DECISION: UpdateDecision = {
  strategy: 'create_new',
  shouldRefreshTimestamp: false,
  shouldUpgradeLevel: false,
  reason: 'stored verbatim: merging was turned off for this add',
  similarity: 0,
};

/**
 * Seed 004 for one piece of new content: find the nearest memory in the same
 * scope and layer, decide merge / keep both / new, and write the result (with
 * the nearest memory's boost) in one atomic `apply`. Throws CONFLICT when the
 * nearest memory changed underneath; the caller decides again.
 */
export async function applyMention(deps: MentionDeps, input: MentionInput): Promise<AddResult> {
  const { text, vector, scope, options, atMs } = input;
  const contextWeight = deps.config.retrieval.contextWeight;
  // What the store keeps: the content's vector moved toward its context.
  const indexed = (content: number[], contextVector = input.contextVector) =>
    contextVector && contextWeight > 0 ? blendVectors(content, contextVector, contextWeight) : content;
  // The content's vector as stored (looked for with too, in its context).
  const stored = indexed(vector);
  // The context of a memory with the same words: embedded once, looked for with and, on a merge, stored with.
  let embedded: { context: string; vector: number[] } | undefined;
  const embedContext = async (context: string): Promise<number[]> => {
    if (embedded?.context !== context) embedded = { context, vector: await deps.embed(context, 'context') };
    return embedded.vector;
  };
  const atIso = new Date(atMs).toISOString();
  const trigger = options.trigger ?? 'user_mention';
  // Candidates: the same scope, and the same layer (facts and core facts merge; episodes and system memories only with their own kind).
  const category = options.category ?? deps.config.defaults.category;
  // Compared with the stored vectors, which carry each memory's context: by the content's own
  // vector, and, for a memory with the same words kept with the same context, by the content moved
  // toward that context as it would be stored (the nearer counts). The same words in the same
  // context then score as the memory itself (~1) and merge; the same words after another question
  // (a short reply) score by the content's own vector, lower, and stay apart; so do two facts taken
  // from one message, which share its context but not their words. The same words said with no
  // context are moved toward the context of a memory that has them, and so merge with it.
  const inContext =
    input.context && input.contextVector && contextWeight > 0 ? { vector: stored, text: input.text, context: input.context } : undefined;
  const nearestHit =
    options.merge === false
      ? undefined
      : await nearestInScope(
          deps.store,
          { vector, text, inContext },
          {
            scope,
            exactScope: true,
            filter: { category: mergeFamily(category) },
            // In a very large scope a store may use an approximate index here (see VectorQuery).
            approximate: true,
          },
          !input.context && contextWeight > 0 ? async (context) => indexed(vector, await embedContext(context)) : undefined,
        );
  const nearest = nearestHit?.memory;
  // Boosts and merges start from the nearest memory's weight and importance now, as the decay rules give them.
  const current = nearest ? currentValues(nearest, atMs, deps.config.decay) : undefined;
  const decision =
    options.merge === false
      ? { ...VERBATIM_DECISION }
      : decideUpdate(nearest ? { id: nearest.id, level: nearest.level, similarity: nearestHit.score } : undefined, deps.config.strategy, mergeFamily(category));

  if (nearest && current && decision.strategy === 'merge_update') {
    const source = await mergeSource(deps.store, nearest);
    // An abort of options.signal, during the history read or the model call (which it stops), is thrown: nothing is written.
    options.signal?.throwIfAborted();
    const merged = await deps.text.merge(source.content, source.level, text, options.signal);
    const mergedContent = validateContent(merged.text, deps.config.limits.maxContentLength, 'merged content');
    const weight = boostedWeight(current.weight, 'merge_update', deps.config.strategy);
    // Restated, the memory counts at least as much as the new content stored alone would.
    const importance = Math.max(current.importance, options.importance ?? deps.config.defaults.importance);
    // As createRecord: content added without a source is the user's, and verified.
    const added = addedBy(options);
    // The newest context given wins; without one, the memory keeps its own.
    const { context: _oldContext, ...rest } = nearest;
    const context = input.context ?? nearest.context;
    const after: MemoryRecord = {
      ...rest,
      // Whole, also when the level stays below full (tag -> summary): what the user just said is not
      // compressed away at once, and later merges and compressions start from it (lastWrittenVersion).
      content: mergedContent,
      ...(context ? { context } : {}),
      level: upgradedLevel(nearest.level, decision.similarity, deps.config.strategy),
      // Asked for as core, a fact becomes core; a core memory never becomes a fact by a merge.
      category: options.category === 'core' ? 'core' : nearest.category,
      type: options.type ?? nearest.type,
      weight,
      baseWeight: weight,
      baseImportance: importance,
      importance,
      // Content said earlier than the memory's own time (an import, a replay) never moves it back.
      updatedAt: laterIso(nearest.updatedAt, atIso),
      lastAccessedAt: laterIso(nearest.lastAccessedAt, atIso),
      source: added.source === 'user' ? 'user' : nearest.source,
      verified: nearest.verified || added.verified,
      sources: unique([...nearest.sources, ...(options.sources ?? [])]),
      tags: mergeTags(nearest.tags, options.tags ?? [], deps.config.limits.maxTags),
      metadata: { ...nearest.metadata, ...(options.metadata ?? {}) },
      revision: nearest.revision + 1,
    };
    const contextVector = input.context || !context || contextWeight === 0 ? input.contextVector : await embedContext(context);
    const mergedVector = indexed(mergedContent === text ? vector : await deps.embed(mergedContent, 'content'), contextVector);
    // An abort that came with the model's answer: nothing is written, whatever the merged text.
    options.signal?.throwIfAborted();
    await deps.store.apply([
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
      id: deps.generateId(),
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
      ...(input.context ? { context: input.context } : {}),
    },
    deps.config.defaults,
  );
  const changes: MemoryChange[] = [
    {
      op: 'put',
      memory: created,
      vector: stored,
      expectedRevision: 0,
      version: versionOf(null, created, { trigger, action: 'create', reason: decision.reason, atIso }),
    },
  ];
  let boosted: MemoryRecord | undefined;
  if (nearest && current) {
    const weight = boostedWeight(current.weight, decision.strategy, deps.config.strategy);
    if (weight !== current.weight) {
      const ageDays = daysBetween(nearest.updatedAt, atMs);
      boosted = {
        ...nearest,
        weight,
        baseWeight: baseWeightFor(weight, ageDays, deps.config.decay.weightAlpha),
        revision: nearest.revision + 1,
      };
      const reason = `mentioned again at similarity ${shownSimilarity(decision.similarity, deps.config.strategy)} (${decision.strategy}): weight ${current.weight} -> ${weight}; content, level and timestamp unchanged`;
      changes.push({
        op: 'put',
        memory: boosted,
        expectedRevision: nearest.revision,
        version: versionOf(nearest, boosted, { trigger, action: 'boost', reason, atIso }),
      });
    }
  }
  await deps.store.apply(changes);
  return { decision, memory: created, ...(boosted ? { boosted } : {}) };
}

/**
 * The text a merge into `memory` starts from. Below full level a memory holds
 * a compression of its text, which its history keeps (seed 004): the merge
 * starts from that text (`lastWrittenVersion`, as of the memory's revision),
 * so the facts the compression hid stay in the merged memory
 * ("我叫张三，是一名AI工程师…" + "我是AI工程师张三" keeps "目前在北京工作").
 * One history read, for a compressed memory only. Without that text in the
 * history (an imported memory, a store that keeps none, or a memory another
 * writer deleted since the search: `history` is then empty), the compressed
 * text at its level, which the new statement replaces. A deleted memory's
 * merge is never written: its expected revision gives CONFLICT, and the add
 * decides again without it.
 */
async function mergeSource(store: MemoryStore, memory: MemoryRecord): Promise<{ content: string; level: MemoryLevel }> {
  if (memory.level === 'full') return { content: memory.content, level: 'full' };
  const written = lastWrittenVersion(await store.history(memory.id), memory.revision);
  return written ? { content: written.after.content, level: 'full' } : { content: memory.content, level: memory.level };
}

/** How many memories nearest to the content (in its context, when it has one) are looked through for one with its words. */
const SAME_CONTEXT_CANDIDATES = 5;

/**
 * The memory nearest to the content: the nearest to its own `vector`, or, when a context is given,
 * one with the same words kept with the same context that is nearer to `inContext` (the content
 * moved toward that context, as it would be stored), scored so. Only such a memory: any other
 * stored vector carries its own context, and the context's pull alone would score a reply high
 * against the question it answers (which addTurns stored as a memory of its own), or two facts
 * taken from one message (both kept with the message as their context) high against each other.
 * Content given without a context (`inContextOf` set) and found among the nearest with the same
 * words kept with a context is moved toward that context (`inContextOf`) and scored the same way:
 * a restatement, not a second memory beside the first.
 */
async function nearestInScope(
  store: MemoryStore,
  content: { vector: number[]; text: string; inContext: { vector: number[]; text: string; context: string } | undefined },
  query: Omit<VectorQuery, 'vector' | 'limit'>,
  inContextOf?: (context: string) => Promise<number[]>,
): Promise<ScoredMemory | undefined> {
  const ownHits = await store.vectorSearch({ ...query, vector: content.vector, limit: inContextOf ? SAME_CONTEXT_CANDIDATES : 1 });
  const own = ownHits[0];
  let inContext = content.inContext;
  if (!inContext && inContextOf) {
    const context = ownHits.find((hit) => hit.memory.content === content.text && hit.memory.context !== undefined)?.memory.context;
    if (context !== undefined) inContext = { vector: await inContextOf(context), text: content.text, context };
  }
  if (!inContext) return own;
  const { context, text } = inContext;
  const hits = await store.vectorSearch({ ...query, vector: inContext.vector, limit: SAME_CONTEXT_CANDIDATES });
  const sameContext = hits.find((hit) => hit.memory.context === context && hit.memory.content === text);
  return sameContext && (!own || sameContext.score > own.score) ? sameContext : own;
}

/** Categories a new memory of `category` may merge with. */
function mergeFamily(category: MemoryRecord['category']): MemoryRecord['category'][] {
  return category === 'fact' || category === 'core' ? ['fact', 'core'] : [category];
}
