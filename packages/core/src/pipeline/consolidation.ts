import { z } from 'zod';
import { formatZodIssues } from '../config.js';
import { scopeKey } from '../scope.js';
import { isCoveredBy, statementTerms } from '../text/statement-terms.js';
import type { MemoryRecord } from '../types.js';
import { wellFormed } from '../well-formed.js';
import { parseJsonObject } from './json-text.js';
import type { SkippedOperation } from './reports.js';

/** One consolidation: `keep` survives with `content`; the `absorb` memories' facts are in it and they are removed. */
export interface ConsolidationGroup {
  keep: string;
  absorb: string[];
  content: string;
}

const groupSchema = z.object({
  keep: z.string().min(1),
  absorb: z.array(z.string().min(1)).default([]),
  content: z.string(),
});

/**
 * Parse the compression model's answer (`{"groups":[…]}`) and keep only the
 * groups that are safe to apply: known ids, each id once, no system memory,
 * one layer (core and fact, or episodes) and one scope per group, content
 * neither empty, too long, nor longer than what it replaces. Every group
 * left out is in `skipped` with why. `reason` is set when the answer as a
 * whole is unusable.
 */
export function parseConsolidation(
  answer: string,
  memories: ReadonlyMap<string, MemoryRecord>,
  maxContentLength: number,
): { groups: ConsolidationGroup[]; skipped: SkippedOperation[]; reason?: string } {
  const json = parseJsonObject(answer);
  if (!json.ok) return { groups: [], skipped: [], reason: json.reason };
  if (!Array.isArray(json.value.groups)) return { groups: [], skipped: [], reason: 'the JSON has no "groups" array' };
  const groups: ConsolidationGroup[] = [];
  const skipped: SkippedOperation[] = [];
  const used = new Set<string>();
  for (const [index, raw] of json.value.groups.entries()) {
    const label = `group ${index + 1}: ${JSON.stringify(raw)?.slice(0, 160) ?? String(raw)}`;
    const parsed = groupSchema.safeParse(raw);
    if (!parsed.success) {
      skipped.push({ operation: label, reason: formatZodIssues(parsed.error) });
      continue;
    }
    // Written straight to the store: a lone half of a UTF-16 pair (an answer cut inside an emoji) becomes U+FFFD.
    const group = { ...parsed.data, content: wellFormed(parsed.data.content.trim()) };
    const problem = checkGroup(group, memories, used, maxContentLength);
    if (problem) {
      skipped.push({ operation: label, reason: problem });
      continue;
    }
    for (const id of [group.keep, ...group.absorb]) used.add(id);
    groups.push(group);
  }
  return { groups, skipped };
}

/**
 * Consolidation without a model, which loses nothing: a memory whose words
 * are all in another memory of the same layer and scope, negated alike, is
 * absorbed by it (exact duplicates included); the survivor's text does not
 * change. Negations and emoji count as words: "I don't like coffee" is not
 * absorbed by "I like coffee and tea", nor "I love 🍣" by "I love 🍕 very much".
 */
export function planDeterministicConsolidation(memories: readonly MemoryRecord[]): ConsolidationGroup[] {
  const candidates = memories
    .filter((memory) => memory.category !== 'system')
    .map((memory) => ({ memory, statement: statementTerms(memory.content) }))
    .filter((entry) => entry.statement.terms.size > 0)
    .sort((a, b) => b.statement.terms.size - a.statement.terms.size || (a.memory.updatedAt < b.memory.updatedAt ? 1 : -1));
  const groups = new Map<string, ConsolidationGroup>();
  const survivors: typeof candidates = [];
  for (const entry of candidates) {
    const host = survivors.find(
      (survivor) =>
        layerOf(survivor.memory) === layerOf(entry.memory) &&
        scopeKey(survivor.memory.scope) === scopeKey(entry.memory.scope) &&
        isCoveredBy(entry.statement, survivor.statement),
    );
    if (!host) {
      survivors.push(entry);
      continue;
    }
    const group = groups.get(host.memory.id) ?? { keep: host.memory.id, absorb: [], content: host.memory.content };
    group.absorb.push(entry.memory.id);
    groups.set(host.memory.id, group);
  }
  return [...groups.values()];
}

function checkGroup(
  group: ConsolidationGroup,
  memories: ReadonlyMap<string, MemoryRecord>,
  used: ReadonlySet<string>,
  maxContentLength: number,
): string | undefined {
  const ids = [group.keep, ...group.absorb];
  const unknown = ids.filter((id) => !memories.has(id));
  if (unknown.length > 0) return `unknown id ${unknown.join(', ')}`;
  if (new Set(ids).size !== ids.length) return 'an id appears twice in the group';
  const reused = ids.filter((id) => used.has(id));
  if (reused.length > 0) return `${reused.join(', ')} already in an earlier group`;
  const members = ids.map((id) => memories.get(id) as MemoryRecord);
  if (members.some((member) => member.category === 'system')) return 'system memories are never consolidated';
  if (new Set(members.map(layerOf)).size > 1) return 'mixes episodes with facts';
  if (new Set(members.map((member) => scopeKey(member.scope))).size > 1) return 'mixes memories of different scopes';
  if (group.content === '') return 'empty content';
  if (group.content.length > maxContentLength) return `content longer than ${maxContentLength} characters`;
  const replaced = members.reduce((sum, member) => sum + member.content.length, 0);
  if (group.content.length > replaced) return 'the consolidated text is longer than the memories it replaces';
  if (group.absorb.length === 0 && group.content === members[0]?.content) return 'changes nothing';
  return undefined;
}

/** Core and facts are one layer, episodes another (as for merges). */
function layerOf(memory: MemoryRecord): string {
  return memory.category === 'episode' ? 'episode' : memory.category === 'system' ? 'system' : 'semantic';
}
