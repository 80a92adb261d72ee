import { MemloomError, type MemloomErrorCode } from '../errors.js';
import { MAX_IMPORTANCE } from '../config.js';
import { currentValues } from '../decay.js';
import { unique } from '../records.js';
import { lastCharacters } from '../well-formed.js';
import type { AddResult } from '../memory-types.js';
import type { MemoryRecord } from '../types.js';
import { boostedWeight, roundValue } from '../update-strategy.js';
import { askModel, toPromptMemory, type PipelineContext } from './context.js';
import type { NormalizedTurn } from './conversation.js';
import { extractFactsDeterministic } from './extraction-fallback.js';
import { parseExtraction, type ExtractionOperation } from './extraction-parser.js';
import type { AppliedOperation, ExtractionReport, SkippedOperation } from './reports.js';

/** Errors that cost one operation, not the turn: a stale read, or text the store will not take. */
const SKIPPABLE_CODES: readonly MemloomErrorCode[] = ['CONFLICT', 'NOT_FOUND', 'EMPTY_CONTENT', 'CONTENT_TOO_LONG'];

/**
 * Seed 002's background monitor for one turn: ask the model for operations
 * on the retrieved memories and apply the valid ones; without a usable
 * answer, add the user's own first-person statements instead.
 */
export async function runExtraction(context: PipelineContext, turn: NormalizedTurn): Promise<ExtractionReport> {
  context.signal?.throwIfAborted();
  const report: ExtractionReport = { source: 'fallback', applied: [], skipped: [], dueForReview: [] };
  const { known, foreign } = await loadRetrieved(context, turn, report.skipped);
  const nowMs = context.clock.now();
  let unparsed = new Set<SkippedOperation>();

  if (context.model) {
    const answer = await askModel(
      context,
      context.prompts.extract({
        user: turn.user.content,
        assistant: turn.assistant.content,
        memories: [...known.values()].map((record) => toPromptMemory(record, nowMs)),
        now: new Date(nowMs).toISOString(),
      }),
    );
    if (answer.ok) {
      const parsed = parseExtraction(answer.text);
      report.skipped.push(...parsed.unparsed);
      unparsed = new Set(parsed.unparsed);
      if (parsed.operations.length > 0) {
        report.source = 'model';
        await applyOperations(context, turn, parsed.operations, { known, foreign }, report);
        logSkipped(context, report.skipped, unparsed);
        return report;
      }
      report.modelFallback = 'the answer held no operation';
    } else {
      report.modelFallback = answer.reason;
    }
    context.logger.warn?.('extraction: model answer not used, taking the deterministic path', { reason: report.modelFallback });
  }

  for (const fact of extractFactsDeterministic(turn.user.content, context.config.fallbackMaxFacts)) {
    await addFact(context, turn, fact, true, `[ADD USER] ${fact}`, report);
  }
  logSkipped(context, report.skipped, unparsed);
  return report;
}

/** The retrieved memories still in the caller's scope, read fresh; the others are remembered as foreign. */
async function loadRetrieved(context: PipelineContext, turn: NormalizedTurn, skipped: SkippedOperation[]) {
  const known = new Map<string, MemoryRecord>();
  const foreign = new Set<string>();
  for (const given of turn.retrieved) {
    if (known.has(given.id) || foreign.has(given.id)) continue;
    const current = await context.memory.get(given.id, { ...(turn.scope ? { scope: turn.scope } : {}) });
    if (current) {
      known.set(current.id, current);
    } else {
      foreign.add(given.id);
      skipped.push({ operation: `retrieved memory ${given.id}`, reason: 'not shown to the model: deleted, or outside the caller\'s scope' });
    }
  }
  return { known, foreign };
}

async function applyOperations(
  context: PipelineContext,
  turn: NormalizedTurn,
  operations: ExtractionOperation[],
  retrieved: { known: Map<string, MemoryRecord>; foreign: Set<string> },
  report: ExtractionReport,
): Promise<void> {
  const touched = new Set<string>();
  let count = 0;
  for (const operation of operations) {
    if (operation.kind === 'skip') continue;
    // Each operation is one write: an abort stops between them, the ones applied stay.
    context.signal?.throwIfAborted();
    if (++count > context.config.maxOperationsPerTurn) {
      report.skipped.push({ operation: operation.line, reason: `over the limit of ${context.config.maxOperationsPerTurn} operations per turn` });
      continue;
    }
    if (operation.kind === 'add') {
      // A memory the ADD merged into now holds the fact: a later line must not delete or rewrite it. (The
      // nearest memory an ADD only boosts keeps its text, and stays open to the answer's corrections.)
      const result = await addFact(context, turn, operation.content, operation.userStated, operation.line, report);
      if (result?.decision.strategy === 'merge_update') touched.add(result.memory.id);
      continue;
    }
    const refusal = checkTarget(operation, retrieved, touched);
    if (refusal) {
      report.skipped.push({ operation: operation.line, reason: refusal });
      continue;
    }
    touched.add(operation.id);
    try {
      await applyToMemory(context, turn, operation, report);
    } catch (error) {
      // The memory moved on or vanished since it was read (the operation was about a state that no longer
      // exists), or the model's text is unusable: skip this one operation, keep the others.
      if (!MemloomError.isInstance(error) || !SKIPPABLE_CODES.includes(error.code)) throw error;
      const reason = error.code === 'CONFLICT' || error.code === 'NOT_FOUND' ? `memory changed meanwhile (${error.code})` : error.message;
      report.skipped.push({ operation: operation.line, reason });
    }
  }
}

/** Why an operation on a named memory must not run, or undefined when it may. */
function checkTarget(
  operation: Exclude<ExtractionOperation, { kind: 'add' | 'skip' }>,
  retrieved: { known: Map<string, MemoryRecord>; foreign: Set<string> },
  touched: Set<string>,
): string | undefined {
  const target = retrieved.known.get(operation.id);
  if (!target) {
    return retrieved.foreign.has(operation.id)
      ? `memory ${operation.id} is outside the caller's scope`
      : `memory ${operation.id} is not among the memories retrieved for this turn`;
  }
  if (touched.has(operation.id)) return `memory ${operation.id} was already changed by an earlier operation of this turn`;
  if (target.category === 'system') return 'system memories are not changed by extraction';
  if (operation.kind === 'delete' && target.category === 'core') return 'core memories are never deleted by extraction';
  return undefined;
}

/** Attempts at a change computed from a record that another writer changed in between (CONFLICT). */
const MAX_OPERATION_ATTEMPTS = 3;

/** Apply one operation; when the memory changes between our read and our write, read it again and recompute. */
async function applyToMemory(
  context: PipelineContext,
  turn: NormalizedTurn,
  operation: Exclude<ExtractionOperation, { kind: 'add' | 'skip' }>,
  report: ExtractionReport,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await applyToMemoryOnce(context, turn, operation, report);
    } catch (error) {
      if (!MemloomError.hasCode(error, 'CONFLICT') || attempt >= MAX_OPERATION_ATTEMPTS) throw error;
      context.logger.debug?.('extraction: memory changed underneath, reading it again', { id: operation.id, attempt });
    }
  }
}

async function applyToMemoryOnce(
  context: PipelineContext,
  turn: NormalizedTurn,
  operation: Exclude<ExtractionOperation, { kind: 'add' | 'skip' }>,
  report: ExtractionReport,
): Promise<void> {
  const { memory, config } = context;
  const scope = turn.scope ? { scope: turn.scope } : {};
  const current = await memory.get(operation.id, scope);
  if (!current) throw new MemloomError({ code: 'NOT_FOUND', message: `no memory with id ${operation.id}` });
  let applied: AppliedOperation;
  if (operation.kind === 'delete') {
    await memory.delete(current.id, scope);
    applied = { kind: 'delete', id: current.id, before: current };
  } else if (operation.kind === 'boost') {
    // Clamped: a memory already at the top stays there rather than failing the rest of the answer.
    // From the importance the decay rules give it now, whether or not a maintenance pass wrote it yet.
    const from = currentValues(current, context.clock.now(), memory.config.decay).importance;
    const importance = Math.min(MAX_IMPORTANCE, roundValue(from + config.boostAmount));
    const after = await memory.update(current.id, { importance }, {
      ...scope,
      expectedRevision: current.revision,
      trigger: 'extraction',
      action: 'boost',
      reason: `shaped the reply: importance ${from} -> ${importance}`,
    });
    applied = { kind: 'boost', id: current.id, importance: { from, to: importance }, after };
    if (after.category === 'fact' && importance >= config.promoteAtImportance && from < config.promoteAtImportance) {
      report.dueForReview.push(after.id);
    }
  } else if (operation.content === current.content) {
    report.skipped.push({ operation: operation.line, reason: 'the corrected text is the memory\'s current text' });
    return;
  } else {
    // A correction: the named memory gets the complete corrected text as a fresh full memory,
    // activated like a merge (timestamp refreshed, weight boosted); the wrong text stays in its history.
    const weight = boostedWeight(currentValues(current, context.clock.now(), memory.config.decay).weight, 'merge_update', memory.config.strategy);
    const after = await memory.update(
      current.id,
      { content: operation.content, level: 'full', weight, verified: operation.userStated, sources: unique([...current.sources, ...turn.sources]) },
      { ...scope, expectedRevision: current.revision, refreshTimestamp: true, trigger: 'extraction', reason: `corrected${operation.userStated ? ' by the user' : ''}: "${current.content}" -> "${operation.content}"` },
    );
    applied = { kind: 'update', id: current.id, before: current, after };
  }
  report.applied.push(applied);
}

/**
 * ADD through the strategy engine: a restated fact merges, a related one is kept beside, a new one is created.
 * Returns the result, or undefined when the ADD was skipped.
 */
async function addFact(
  context: PipelineContext,
  turn: NormalizedTurn,
  content: string,
  userStated: boolean,
  line: string,
  report: ExtractionReport,
): Promise<AddResult | undefined> {
  try {
    const around = factContext(turn, content, context.memory.config.limits.maxContentLength);
    const result = await context.memory.add(content, {
      ...(around ? { context: around } : {}),
      ...(turn.scope ? { scope: turn.scope } : {}),
      category: 'fact',
      source: 'background_ai',
      verified: userStated,
      sources: turn.sources,
      trigger: 'extraction',
      ...(context.signal ? { signal: context.signal } : {}),
    });
    report.applied.push({ kind: 'add', content, result });
    return result;
  } catch (error) {
    // The caller's abort (thrown as its reason, whatever that is) stops the turn; it is no skipped operation.
    if (context.signal?.aborted || !MemloomError.isInstance(error) || !SKIPPABLE_CODES.includes(error.code)) throw error;
    report.skipped.push({ operation: line, reason: error.message });
    return undefined;
  }
}

/**
 * What a fact is kept with as its context (it shapes the vector and the
 * keyword index): the assistant's question the turn answers, then the user
 * message the fact was cut from, so "I love it there" is found by a question
 * about the city named before it. Cut to its last `maxLength` characters (a long message must
 * not cost the fact); none when it would only repeat the fact.
 */
export function factContext(turn: Pick<NormalizedTurn, 'user' | 'question'>, fact: string, maxLength: number): string | undefined {
  const text = [turn.question, turn.user.content]
    .map((part) => part?.trim())
    .filter((part): part is string => !!part)
    .join('\n');
  if (text === '' || text === fact.trim()) return undefined;
  if (text.length <= maxLength) return text;
  return lastCharacters(text, maxLength).trim() || undefined;
}

/** Skipped operations warned one by one; past these, one summary warning counts the rest. */
const WARNED_ONE_BY_ONE = 10;

/** Warn about skipped operations: a few one by one, then a count; lines that are no operation as one summary. */
function logSkipped(context: PipelineContext, skipped: SkippedOperation[], unparsed: ReadonlySet<SkippedOperation>): void {
  const warn = context.logger.warn;
  if (!warn) return;
  const operations = skipped.filter((entry) => !unparsed.has(entry));
  for (const entry of operations.slice(0, WARNED_ONE_BY_ONE)) warn('extraction: operation skipped', { operation: entry.operation, reason: entry.reason });
  if (operations.length > WARNED_ONE_BY_ONE) {
    warn('extraction: more operations skipped', { count: operations.length - WARNED_ONE_BY_ONE, reasons: unique(operations.slice(WARNED_ONE_BY_ONE).map((entry) => entry.reason)).slice(0, WARNED_ONE_BY_ONE) });
  }
  if (unparsed.size > 0) {
    const [first] = unparsed;
    warn('extraction: answer lines not understood', { count: unparsed.size, first: first?.operation.slice(0, 200), reason: first?.reason });
  }
}
