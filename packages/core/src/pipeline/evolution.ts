import type { z } from 'zod';
import { formatZodIssues } from '../config.js';
import { policyOverridesSchema, policySchema, type Policy, type PolicyKey, type PolicyOverrides, type PolicyStorage } from '../policy.js';
import type { PromptPolicyParameter } from '../prompts.js';
import { askModel, type PipelineContext } from './context.js';
import type { ConversationMessage } from './conversation.js';
import { parseJsonObject } from './json-text.js';
import type { DecisionSource } from './reports.js';

/** One accepted change of a policy parameter. */
export interface PolicyChange {
  key: PolicyKey;
  from: Policy[PolicyKey];
  to: Policy[PolicyKey];
}

/** A suggestion that was not applied, with why (unknown parameter, out of range, wrong type, no change). */
export interface RejectedSuggestion {
  key: string;
  value: unknown;
  reason: string;
}

/** What `evolve` / `maybeEvolve` did. */
export interface EvolutionReport {
  /** `updated`: new overrides were written; `unchanged`: the model suggested nothing usable; `skipped`: no reflection ran. */
  action: 'updated' | 'unchanged' | 'skipped';
  reason: string;
  source?: DecisionSource;
  modelFallback?: string;
  accepted: PolicyChange[];
  rejected: RejectedSuggestion[];
  /** The overrides written; the storage snapshotted the previous ones first. */
  overrides?: PolicyOverrides;
  /** For `maybeEvolve`: messages counted toward the next reflection. */
  messagesSinceReflection?: number;
}

/** What each parameter does, for the prompt. */
const DESCRIPTIONS: Record<PolicyKey, string> = {
  retrieve_limit: 'memory blocks returned for a query',
  recent_days: 'days of daily notes added to the context',
  session_summary_message_threshold: 'summarize the session past this many messages',
  session_summary_token_percent: 'summarize the session past this share of the context window (percent)',
  session_summary_keep_count: 'messages kept verbatim after a summary',
  session_relevant_history_limit: 'relevant past turns injected per query (0 = off)',
  session_relevant_fallback_keep: 'recent messages kept when no past turn is relevant',
  long_term_compress_char_threshold: 'compress the long-term memory past this many characters (0 = off)',
  evolution_enabled: 'reflect on the conversation and tune this policy',
};

/** The operator's switch: evolution never turns itself on or off. */
const NOT_TUNABLE: readonly PolicyKey[] = ['evolution_enabled'];

/**
 * Seed 001's evolution: reflect on the recent conversation and the current
 * policy, validate every suggested change against `policySchema`'s ranges,
 * and write the accepted ones over the current overrides (the storage
 * snapshots them first; deleting the overrides rolls back). Without a
 * storage or a model nothing is written.
 */
export async function runEvolution(
  context: PipelineContext,
  input: { policy: Policy; storage: PolicyStorage | undefined; messages: readonly ConversationMessage[] },
): Promise<EvolutionReport> {
  context.signal?.throwIfAborted();
  const empty = { accepted: [], rejected: [] };
  if (!input.storage) return { ...empty, action: 'skipped', reason: 'no policyStorage to write overrides to' };
  if (!context.model) return { ...empty, action: 'skipped', reason: 'no language model: the policy stays as it is' };
  const stored = policyOverridesSchema.safeParse((await input.storage.readOverrides()) ?? {});
  if (!stored.success) {
    return { ...empty, action: 'skipped', reason: `the stored overrides are invalid (${formatZodIssues(stored.error)}); not overwriting them` };
  }
  const answer = await askModel(
    context,
    context.prompts.evolve({ messages: input.messages.map(({ role, content }) => ({ role, content })), parameters: describePolicy(input.policy) }),
  );
  const json = answer.ok ? parseJsonObject(answer.text) : { ok: false as const, reason: answer.reason };
  if (!json.ok) {
    context.logger.warn?.('evolution: model answer not used; the policy stays as it is', { reason: json.reason });
    return { ...empty, action: 'unchanged', reason: 'no usable suggestion', source: 'fallback', modelFallback: json.reason };
  }
  const { accepted, rejected } = validateSuggestions(json.value, input.policy);
  for (const entry of rejected) context.logger.warn?.('evolution: suggestion rejected', { key: entry.key, value: entry.value, reason: entry.reason });
  if (accepted.length === 0) return { accepted, rejected, action: 'unchanged', reason: 'no acceptable change suggested', source: 'model' };
  const overrides: PolicyOverrides = { ...stripUndefined(stored.data), ...Object.fromEntries(accepted.map((change) => [change.key, change.to])) };
  // An abort that came as the model answered: nothing written.
  context.signal?.throwIfAborted();
  await input.storage.writeOverrides(overrides, new Date(context.clock.now()));
  return { accepted, rejected, action: 'updated', reason: `changed ${accepted.map((change) => change.key).join(', ')}`, source: 'model', overrides };
}

/** Check each suggested parameter against the policy's schema; nothing outside it is accepted. */
export function validateSuggestions(suggestion: Record<string, unknown>, policy: Policy): { accepted: PolicyChange[]; rejected: RejectedSuggestion[] } {
  const accepted: PolicyChange[] = [];
  const rejected: RejectedSuggestion[] = [];
  const shape = policySchema.shape as Record<string, z.ZodDefault<z.ZodType> | undefined>;
  for (const [key, value] of Object.entries(suggestion)) {
    const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (!field) {
      rejected.push({ key, value, reason: 'unknown parameter' });
      continue;
    }
    const policyKey = key as PolicyKey;
    if (NOT_TUNABLE.includes(policyKey)) {
      rejected.push({ key, value, reason: `${key} is the operator's switch; evolution never changes it` });
      continue;
    }
    const checked = field.unwrap().safeParse(value);
    if (!checked.success) {
      rejected.push({ key, value, reason: `${formatZodIssues(checked.error, key)} (allowed: ${rangeOf(policyKey)})` });
      continue;
    }
    if (checked.data === policy[policyKey]) {
      rejected.push({ key, value, reason: 'same as the current value' });
      continue;
    }
    accepted.push({ key: policyKey, from: policy[policyKey], to: checked.data as Policy[PolicyKey] });
  }
  return { accepted, rejected };
}

/** The tunable parameters with their values and allowed ranges, read from `policySchema`. */
export function describePolicy(policy: Policy): PromptPolicyParameter[] {
  return (Object.keys(DESCRIPTIONS) as PolicyKey[])
    .filter((key) => !NOT_TUNABLE.includes(key))
    .map((key) => ({ key, value: policy[key], range: rangeOf(key), description: DESCRIPTIONS[key] }));
}

function rangeOf(key: PolicyKey): string {
  const inner = policySchema.shape[key].unwrap() as unknown as { minValue?: number | null; maxValue?: number | null; isInt?: boolean };
  if (typeof inner.minValue !== 'number' && typeof inner.maxValue !== 'number') return 'true or false';
  return `${inner.isInt ? 'integer' : 'number'} ${inner.minValue ?? '-∞'}..${inner.maxValue ?? '∞'}`;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
