import type { MemoryChange } from '../contracts.js';
import { baseImportanceFor, baseWeightFor, daysBetween } from '../decay.js';
import { MemloomError } from '../errors.js';
import type { Policy } from '../policy.js';
import { mergeTags, unique, versionOf } from '../records.js';
import type { MemoryRecord, Scope } from '../types.js';
import { embedChecked } from '../vector.js';
import { planDeterministicConsolidation, parseConsolidation, type ConsolidationGroup } from './consolidation.js';
import { askModel, toPromptMemory, type PipelineContext } from './context.js';
import type { CompressionTimes } from './compression-times.js';
import type { DecisionSource, SkippedOperation } from './reports.js';

export interface CompressLongTermOptions {
  scope?: Scope;
  /** Run now, whatever the threshold and the once-a-day limit say. @default false */
  force?: boolean;
  /**
   * Stops the compression, throwing the signal's reason: the model call and
   * the embedding are aborted in flight, and after an abort nothing is
   * written (the plan is applied in one write, or not at all).
   */
  signal?: AbortSignal;
}

/** One consolidation as applied. */
export interface AppliedConsolidation {
  /** The memory that survived, as it was and as it became. */
  before: MemoryRecord;
  after: MemoryRecord;
  /** The memories removed; each is kept whole in `after.metadata.absorbed` (and so in the survivor's history). */
  absorbed: MemoryRecord[];
}

/** What `compressLongTerm` did. */
export interface LongTermCompressionReport {
  action: 'compressed' | 'skipped';
  reason: string;
  /** `long_term_compress_char_threshold`. */
  threshold: number;
  /** Characters of memory text in scope (system memories left out) before, and after when compressed. */
  charactersBefore?: number;
  charactersAfter?: number;
  source?: DecisionSource;
  modelFallback?: string;
  applied: AppliedConsolidation[];
  /** Groups of the model's plan left out, with why. */
  skipped: SkippedOperation[];
  /** The last compression of this scope, this one included. */
  lastCompressedAt?: string;
  /** Where that time is kept: the policy storage (survives restarts) or this process only. */
  lastCompressionKeptIn: 'policyStorage' | 'process';
}

/** Metadata key on a survivor listing the memories it absorbed. */
export const ABSORBED_KEY = 'absorbed';

/**
 * Seed 001's long-term compression for one scope: past the character
 * threshold and at most once per `compressionIntervalHours`, the model
 * consolidates memories into fewer ones; the plan is validated and applied
 * in one atomic `store.apply` (survivors updated, absorbed memories deleted
 * with their text kept in the survivor). Without a usable answer, only
 * memories whose words another memory already holds are absorbed.
 */
export async function runLongTermCompression(
  context: PipelineContext,
  policy: Policy,
  times: CompressionTimes,
  options: CompressLongTermOptions,
): Promise<LongTermCompressionReport> {
  context.signal?.throwIfAborted();
  const threshold = policy.long_term_compress_char_threshold;
  const scoped = options.scope ? { scope: options.scope } : {};
  const base = { threshold, applied: [], skipped: [], lastCompressionKeptIn: times.keptIn } satisfies Partial<LongTermCompressionReport>;
  if (threshold === 0 && !options.force) return { ...base, action: 'skipped', reason: 'long_term_compress_char_threshold is 0 (off)' };
  const nowMs = context.clock.now();
  const last = await times.read(options.scope);
  const intervalMs = context.config.compressionIntervalHours * 3_600_000;
  const lastIso = last?.toISOString();
  if (last && nowMs - last.getTime() < intervalMs && !options.force) {
    return { ...base, action: 'skipped', reason: `compressed less than ${context.config.compressionIntervalHours} h ago`, lastCompressedAt: lastIso as string };
  }
  const memories = (await context.memory.list(scoped)).filter((memory) => memory.category !== 'system');
  const charactersBefore = memories.reduce((sum, memory) => sum + memory.content.length, 0);
  const sized = { ...base, charactersBefore, ...(lastIso ? { lastCompressedAt: lastIso } : {}) };
  if (charactersBefore <= threshold && !options.force) {
    return { ...sized, action: 'skipped', reason: `${charactersBefore} characters <= threshold ${threshold}` };
  }

  const plan = await planGroups(context, memories, charactersBefore, threshold);
  const byId = new Map(memories.map((memory) => [memory.id, memory]));
  const applied = plan.groups.map((group) => consolidate(context, group, byId, nowMs));
  try {
    await applyAll(context, applied, nowMs);
  } catch (error) {
    if (!MemloomError.hasCode(error, 'CONFLICT')) throw error;
    return { ...sized, ...plan.outcome, action: 'skipped', reason: 'memories changed during the compression; nothing was written', skipped: plan.skipped };
  }
  await times.write(options.scope, new Date(nowMs));
  const textOf = (records: MemoryRecord[]) => records.reduce((sum, memory) => sum + memory.content.length, 0);
  const removed = textOf(applied.flatMap((entry) => [entry.before, ...entry.absorbed]));
  const added = textOf(applied.map((entry) => entry.after));
  return {
    ...sized,
    ...plan.outcome,
    action: 'compressed',
    reason: applied.length > 0 ? `consolidated ${applied.length} group(s)` : 'nothing to consolidate',
    charactersAfter: charactersBefore - removed + added,
    applied,
    skipped: plan.skipped,
    lastCompressedAt: new Date(nowMs).toISOString(),
  };
}

async function planGroups(context: PipelineContext, memories: MemoryRecord[], characters: number, threshold: number) {
  let modelFallback: string | undefined;
  if (context.model) {
    const nowMs = context.clock.now();
    const shown = new Map<string, MemoryRecord>();
    let budget = context.config.compressionMaxPromptCharacters;
    for (const memory of memories) {
      if (memory.content.length > budget) continue;
      budget -= memory.content.length;
      shown.set(memory.id, memory);
    }
    const prompt = context.prompts.compressLongTerm({ memories: [...shown.values()].map((memory) => toPromptMemory(memory, nowMs)), characters, threshold });
    const answer = await askModel(context, prompt);
    if (answer.ok) {
      const parsed = parseConsolidation(answer.text, shown, context.memory.config.limits.maxContentLength);
      if (parsed.reason === undefined) return { groups: parsed.groups, skipped: parsed.skipped, outcome: { source: 'model' as const } };
      modelFallback = parsed.reason;
    } else {
      modelFallback = answer.reason;
    }
    context.logger.warn?.('long-term compression: model answer not used, taking the deterministic path', { reason: modelFallback });
  }
  const outcome = { source: 'fallback' as const, ...(modelFallback ? { modelFallback } : {}) };
  return { groups: planDeterministicConsolidation(memories), skipped: [] as SkippedOperation[], outcome };
}

/** The survivor of a group: the new text, the group's highest importance, weight and layer, every source and tag, the newest timestamp. */
function consolidate(context: PipelineContext, group: ConsolidationGroup, byId: Map<string, MemoryRecord>, nowMs: number): AppliedConsolidation {
  const before = byId.get(group.keep) as MemoryRecord;
  const absorbed = group.absorb.map((id) => byId.get(id) as MemoryRecord);
  const members = [before, ...absorbed];
  const decay = context.memory.config.decay;
  const category = members.some((member) => member.category === 'core') ? 'core' : before.category;
  const importance = Math.max(...members.map((member) => member.importance));
  const weight = Math.max(...members.map((member) => member.weight));
  const updatedAt = members.map((member) => member.updatedAt).sort().pop() as string;
  const ageDays = daysBetween(updatedAt, nowMs);
  // Each absorbed record is kept whole (what it had absorbed itself flattened beside it), so nothing is lost.
  const absorbedEntries = [before, ...absorbed].flatMap((member) => {
    const earlier = Array.isArray(member.metadata[ABSORBED_KEY]) ? (member.metadata[ABSORBED_KEY] as unknown[]) : [];
    if (member === before) return earlier;
    const { [ABSORBED_KEY]: _nested, ...metadata } = member.metadata;
    return [...earlier, { ...member, metadata }];
  });
  const after: MemoryRecord = {
    ...before,
    content: group.content,
    level: group.content === before.content ? before.level : 'full',
    category,
    importance,
    baseImportance: baseImportanceFor({ category, importance }, ageDays, decay),
    weight,
    baseWeight: baseWeightFor(weight, ageDays, decay.weightAlpha),
    updatedAt,
    lastAccessedAt: members.map((member) => member.lastAccessedAt).sort().pop() as string,
    verified: members.every((member) => member.verified),
    sources: unique(members.flatMap((member) => member.sources)),
    tags: mergeTags(before.tags, absorbed.flatMap((member) => member.tags), context.memory.config.limits.maxTags),
    metadata: { ...before.metadata, ...(absorbedEntries.length > 0 ? { [ABSORBED_KEY]: absorbedEntries } : {}) },
    revision: before.revision + 1,
  };
  // A rewritten text is no longer what was said in the old memory's context: the context goes.
  if (group.content !== before.content) delete after.context;
  return { before, after, absorbed };
}

/** One atomic write: each survivor (re-embedded when its text changed) and each absorbed memory's delete. */
async function applyAll(context: PipelineContext, applied: AppliedConsolidation[], nowMs: number): Promise<void> {
  if (applied.length === 0) return;
  const { memory } = context;
  const changedText = applied.filter((entry) => entry.after.content !== entry.before.content);
  const vectors = await embed(context, changedText.map((entry) => entry.after.content));
  const atIso = new Date(nowMs).toISOString();
  const changes: MemoryChange[] = [];
  for (const entry of applied) {
    const index = changedText.indexOf(entry);
    const absorbedIds = entry.absorbed.map((absorbed) => absorbed.id);
    const reason = `long-term compression${absorbedIds.length > 0 ? `: absorbed ${absorbedIds.join(', ')} (their text is in metadata.${ABSORBED_KEY})` : ': rewritten shorter'}`;
    changes.push({
      op: 'put',
      memory: entry.after,
      ...(index >= 0 ? { vector: vectors[index] as number[] } : {}),
      expectedRevision: entry.before.revision,
      version: versionOf(entry.before, entry.after, { trigger: 'passive_decay', action: 'compress', reason, atIso }),
    });
    for (const absorbed of entry.absorbed) changes.push({ op: 'delete', id: absorbed.id, expectedRevision: absorbed.revision });
  }
  // The last step before the one write: an abort during the embedding (an embedder may not heed its signal) writes nothing.
  context.signal?.throwIfAborted();
  await memory.store.apply(changes);
}

async function embed(context: PipelineContext, texts: string[]): Promise<number[][]> {
  return texts.length === 0 ? [] : embedChecked(context.memory.embedder, texts, 'document', context.signal);
}
