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
// Full-width brackets and colons (［ADD］, 【ADD】, [UPDATE：id]) and bold (**[ADD USER]** text) are accepted too.
// A colon or dash after the bracket ("[ADD]: I like tea", "[ADD] — I like tea") is not part of the fact.
// No two quantifiers here can match the same characters, so matching is linear in the line.
const INSIDE = /^([A-Za-z]+)(?:\s*:\s*(\S+))?(?:\s+([A-Za-z]+))?$/u;
const OPENING = ['[', '［', '【'];
const CLOSING = [']', '］', '】'];
/** Characters between the brackets of an operation at most. */
const MAX_INSIDE = 100;
const SEPARATOR = /^(?:[:：]\s*|[-–—]\s+)/u;
const LIST_MARKER = /^(?:[-*•]\s+|\d+[.)]\s+)/u;
const KINDS = ['add', 'update', 'boost', 'delete', 'skip'] as const;

/** Characters of an answer that are read; the rest is reported as one unparsed entry. */
const MAX_EXTRACTION_ANSWER = 200_000;

/**
 * Parse the background monitor's answer, one operation per line. Total: every
 * non-blank line is either an operation or an `unparsed` entry saying why not.
 * List markers ("- ", "1. ") and code fences are tolerated; anything else
 * that is not exactly an operation is not guessed at. Only the first
 * `MAX_EXTRACTION_ANSWER` characters are read.
 */
export function parseExtraction(answer: string): ParsedExtraction {
  const operations: ExtractionOperation[] = [];
  const unparsed: SkippedOperation[] = [];
  let text = answer;
  if (answer.length > MAX_EXTRACTION_ANSWER) {
    // Cut at the last line break inside the limit, so no line is read half.
    const cut = answer.lastIndexOf('\n', MAX_EXTRACTION_ANSWER);
    text = answer.slice(0, cut > 0 ? cut : MAX_EXTRACTION_ANSWER);
  }
  for (const rawLine of text.split(/\r?\n/u)) {
    const line = rawLine.trim().replace(LIST_MARKER, '');
    if (line === '' || line.startsWith('```')) continue;
    const parsed = parseLine(line);
    if (typeof parsed === 'string') unparsed.push({ operation: line, reason: parsed });
    else operations.push(parsed);
  }
  if (text.length < answer.length) {
    unparsed.push({ operation: `the last ${answer.length - text.length} characters of the answer`, reason: `not read: an answer is read up to ${MAX_EXTRACTION_ANSWER} characters` });
  }
  return { operations, unparsed };
}

/** A line's operation word, id and flag, and the text after its brackets; undefined when it does not start with one. */
function splitOperation(line: string): { word: string; id?: string; flag?: string; rest: string } | undefined {
  const bold = line.startsWith('**');
  const text = bold ? line.slice(2) : line;
  if (!OPENING.includes(text[0] ?? '')) return undefined;
  let close = -1;
  for (let index = 1; index < text.length && index <= MAX_INSIDE + 1; index++) {
    if (CLOSING.includes(text[index] ?? '')) {
      close = index;
      break;
    }
  }
  if (close < 0) return undefined;
  const match = INSIDE.exec(text.slice(1, close).replace(/：/gu, ':').trim());
  if (!match) return undefined;
  let rest = text.slice(close + 1).replace(/^\*\*/u, '');
  if (bold) rest = rest.replace(/\*\*\s*$/u, '');
  const [, word = '', id, flag] = match;
  return { word, ...(id !== undefined ? { id } : {}), ...(flag !== undefined ? { flag } : {}), rest: rest.trim().replace(SEPARATOR, '').trim() };
}

/** Whether a fact's text is itself an operation ("[ADD] [DELETE:abc]"): a model's slip, never a fact. */
function isOperation(text: string): boolean {
  const split = splitOperation(text);
  return split !== undefined && KINDS.includes(split.word.toLowerCase() as (typeof KINDS)[number]);
}

/** One line → an operation, or the reason it is not one. */
function parseLine(line: string): ExtractionOperation | string {
  const split = splitOperation(line);
  if (!split) return 'not an operation ([ADD], [UPDATE:id], [BOOST:id], [DELETE:id] or [SKIP])';
  const { word, id, flag, rest } = split;
  const kind = word.toLowerCase() as (typeof KINDS)[number];
  if (!KINDS.includes(kind)) return `unknown operation "${word}"`;
  if (flag !== undefined && (flag.toUpperCase() !== 'USER' || (kind !== 'add' && kind !== 'update'))) {
    return `unexpected "${flag}" (only ADD and UPDATE take USER)`;
  }
  const content = rest;
  if ((kind === 'add' || kind === 'update') && isOperation(content)) return `the ${kind.toUpperCase()}'s fact is itself an operation`;
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
