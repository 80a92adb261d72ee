import type { MatchCondition } from '@langchain/langgraph';
import { excerpt, MemloomError } from '@memloom/core';

// LangGraph's rules for a store's input, and its filters, as its InMemoryStore applies them.

/** Whether a namespace matches a `listNamespaces` condition: a prefix or a suffix, `*` matching any label. */
export function matchesCondition(condition: MatchCondition, namespace: readonly string[]): boolean {
  const { path } = condition;
  if (path.length > namespace.length) return false;
  const start = condition.matchType === 'prefix' ? 0 : namespace.length - path.length;
  return path.every((label, position) => label === '*' || namespace[start + position] === label);
}

/** LangGraph's filter: top-level value fields, equal, or compared with $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin. */
export function matchesValueFilter(value: unknown, filter: Record<string, unknown> | undefined): boolean {
  if (!filter) return true;
  const fields = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  return Object.entries(filter).every(([field, wanted]) => compare(fields[field], wanted));
}

/**
 * LangGraph's namespace rules (`validateNamespace`): labels are non-empty strings without ".",
 * ":" or NUL; only search and listing take an empty namespace; only `put` refuses the root "langgraph".
 */
export function checkNamespace(namespace: readonly string[], rules: { allowEmpty: boolean; allowReservedRoot: boolean }): void {
  if (!Array.isArray(namespace)) throw invalid(`a namespace must be an array of strings, got ${typeof namespace}`);
  if (namespace.length === 0 && !rules.allowEmpty) throw invalid('a namespace cannot be empty');
  const shown = excerpt(JSON.stringify(namespace), 80);
  for (const label of namespace as unknown[]) {
    if (typeof label !== 'string') throw invalid(`namespace ${shown}: labels must be strings, got ${typeof label}`);
    if (label === '') throw invalid(`namespace ${shown}: labels cannot be empty strings`);
    if (label.includes('.')) throw invalid(`namespace ${shown}: label ${excerpt(JSON.stringify(label), 80)} holds a period ("."), which LangGraph does not allow`);
    if (label.includes(':')) throw invalid(`namespace ${shown}: label ${excerpt(JSON.stringify(label), 80)} holds a colon (":"), which LangGraph does not allow`);
    if (label.includes('\0')) throw invalid(`namespace ${shown}: label ${excerpt(JSON.stringify(label), 80)} holds a NUL character, which LangGraph does not allow`);
  }
  if (namespace[0] === 'langgraph' && !rules.allowReservedRoot) throw invalid(`namespace ${shown}: the root label "langgraph" is reserved by LangGraph`);
}

/** An item key is a string (LangGraph's types say so; a batch from JavaScript may not). */
export function checkKey(key: unknown): void {
  if (typeof key !== 'string') throw invalid(`an item key must be a string, got ${typeof key}`);
}

/** A value as stored: a JSON copy, so it must be a JSON object. */
export function jsonCopy(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('an item value must be an object (or null to delete the item)');
  }
  let copy: unknown;
  try {
    const text = JSON.stringify(value);
    copy = text === undefined ? undefined : JSON.parse(text);
  } catch (error) {
    throw invalid(`an item value must be storable as JSON: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  if (typeof copy !== 'object' || copy === null || Array.isArray(copy)) {
    throw invalid('an item value must be storable as a JSON object (its toJSON gives something else)');
  }
  return copy as Record<string, unknown>;
}

/** Bad input to the store (INVALID_INPUT). */
export function invalid(message: string, cause?: unknown): MemloomError {
  return new MemloomError({ code: 'INVALID_INPUT', backend: 'langgraph-store', message, ...(cause === undefined ? {} : { cause }) });
}

/** LangGraph's filter operators. */
const OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin']);

function compare(actual: unknown, wanted: unknown): boolean {
  const isOperators =
    typeof wanted === 'object' && wanted !== null && !Array.isArray(wanted) && Object.keys(wanted).length > 0 && Object.keys(wanted).every((key) => OPERATORS.has(key));
  if (!isOperators) return deepEqual(actual, wanted);
  return Object.entries(wanted as Record<string, unknown>).every(([operator, operand]) => {
    switch (operator) {
      case '$eq':
        return deepEqual(actual, operand);
      case '$ne':
        return !deepEqual(actual, operand);
      case '$gt':
        return Number(actual) > Number(operand);
      case '$gte':
        return Number(actual) >= Number(operand);
      case '$lt':
        return Number(actual) < Number(operand);
      case '$lte':
        return Number(actual) <= Number(operand);
      case '$in':
        return Array.isArray(operand) && operand.some((entry) => deepEqual(actual, entry));
      case '$nin':
        return !Array.isArray(operand) || !operand.some((entry) => deepEqual(actual, entry));
      default:
        return false;
    }
  });
}

function deepEqual(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
