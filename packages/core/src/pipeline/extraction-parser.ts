import type { SkippedOperation } from './reports.js';

/** One operation of seed 002's background monitor, parsed from a line of the model's answer. */
export type ExtractionOperation =
  | { kind: 'add'; content: string; userStated: boolean; line: string }
  | { kind: 'update'; id: string; content: string; userStated: boolean; line: string }
  | { kind: 'boost'; id: string; line: string }
  | { kind: 'delete'; id: string; line: string }
  | { kind: 'skip'; line: string };

export interface ParsedExtraction {
  operations: ExtractionOperation[];
  /** Lines that are not an operation, with why. */
  unparsed: SkippedOperation[];
}

// [ADD] text · [ADD USER] text · [UPDATE:id] text · [UPDATE:id USER] text · [BOOST:id] · [DELETE:id] · [SKIP]
// A colon or dash after the bracket ("[ADD]: I like tea", "[ADD] — I like tea") is not part of the fact.
const OPERATION = /^\[\s*([A-Za-z]+)\s*(?::\s*([^\]\s]+))?\s*(?:\s([A-Za-z]+))?\s*\]\s*(?:[:：]\s*|[-–—]\s+)?(.*)$/u;
const LIST_MARKER = /^(?:[-*•]\s+|\d+[.)]\s+)/u;
const KINDS = ['add', 'update', 'boost', 'delete', 'skip'] as const;

/**
 * Parse the background monitor's answer, one operation per line. Total: every
 * non-blank line is either an operation or an `unparsed` entry saying why not.
 * List markers ("- ", "1. ") and code fences are tolerated; anything else
 * that is not exactly an operation is not guessed at.
 */
export function parseExtraction(answer: string): ParsedExtraction {
  const operations: ExtractionOperation[] = [];
  const unparsed: SkippedOperation[] = [];
  for (const rawLine of answer.split(/\r?\n/u)) {
    const line = rawLine.trim().replace(LIST_MARKER, '');
    if (line === '' || line.startsWith('```')) continue;
    const parsed = parseLine(line);
    if (typeof parsed === 'string') unparsed.push({ operation: line, reason: parsed });
    else operations.push(parsed);
  }
  return { operations, unparsed };
}

/** One line → an operation, or the reason it is not one. */
function parseLine(line: string): ExtractionOperation | string {
  const match = OPERATION.exec(line);
  if (!match) return 'not an operation ([ADD], [UPDATE:id], [BOOST:id], [DELETE:id] or [SKIP])';
  const [, word = '', id, flag, rest = ''] = match;
  const kind = word.toLowerCase() as (typeof KINDS)[number];
  if (!KINDS.includes(kind)) return `unknown operation "${word}"`;
  if (flag !== undefined && (flag.toUpperCase() !== 'USER' || (kind !== 'add' && kind !== 'update'))) {
    return `unexpected "${flag}" (only ADD and UPDATE take USER)`;
  }
  const content = rest.trim();
  const userStated = flag !== undefined;
  switch (kind) {
    case 'add':
      if (id !== undefined) return 'ADD takes no id';
      if (content === '') return 'ADD without a fact';
      return { kind, content, userStated, line };
    case 'update':
      if (id === undefined) return 'UPDATE needs an id ([UPDATE:id] fact)';
      if (content === '') return 'UPDATE without the corrected fact';
      return { kind, id, content, userStated, line };
    case 'boost':
    case 'delete':
      // Trailing text is the model's reason; it changes nothing.
      if (id === undefined) return `${kind.toUpperCase()} needs an id ([${kind.toUpperCase()}:id])`;
      return { kind, id, line };
    case 'skip':
      if (id !== undefined) return 'SKIP takes no id';
      return { kind, line };
  }
}
