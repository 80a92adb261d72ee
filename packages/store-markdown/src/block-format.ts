import { createHash } from 'node:crypto';
import { isIsoTime, isOnCalendar, MEMORY_CATEGORIES, MEMORY_LEVELS, MEMORY_SOURCES, MEMORY_TYPES, wellFormed, type MemoryRecord, type Scope, type ScopeKey } from '@memloom/core';
import type { HashedFolder } from './scope-path.js';
import { z } from 'zod';

/**
 * The Markdown format. A file is a free preamble (title, notes) followed by
 * blocks, one per memory:
 *
 *     ## 2024-03-02
 *     <!-- memloom {"id":"…","revision":2,…,"context":"…","sum":"…"} -->
 *     The user drinks sugar-free latte, large.
 *
 * The heading shows the creation date (UTC). The comment line holds the
 * fields, the memory's context among them (a JSON string, so any text fits
 * on the one line); `sum` is a checksum of the text and fields as memloom
 * wrote them, so a block a person changed is told apart from one memloom
 * wrote.
 */

/** A block's heading: `## ` at the start of a line (CommonMark level 2). */
const HEADING = /^##(?:[ \t]+(.*?))?[ \t]*$/u;
const META = /^<!--\s*memloom\b(.*?)-->\s*$/u;
const META_START = /^<!--\s*memloom\b/u;
/** Content lines that would read as a heading or a field line get one more leading backslash. */
const NEEDS_ESCAPE = /^\\*(?:##(?:[ \t]|$)|<!--\s*memloom\b)/u;
const ESCAPED = /^\\+(?:##(?:[ \t]|$)|<!--\s*memloom\b)/u;
const DATE_HEADING = /^(\d{4})-(\d{2})-(\d{2})$/u;

// Times as the files hold them, checked as they come in (a put, a file read back): `Date.parse` alone reads
// 2024-02-30 as March 1, and a time without an offset as the machine's local time, so a date a person
// typed would be taken in shifted, or differently on another machine, without a word.
const isoDate = z.string().refine(isIsoTime, {
  message: 'must be an ISO 8601 timestamp with Z or an offset, on a day the calendar has, like 2024-03-02T09:14:00.000Z or 2024-03-02T11:14+02:00',
});

/** Fields as they appear in the comment line; defaults fill what is left out. */
const metaSchema = z
  .object({
    id: z.string().min(1).max(256),
    revision: z.number().int().min(1),
    category: z.enum(MEMORY_CATEGORIES),
    type: z.enum(MEMORY_TYPES),
    level: z.enum(MEMORY_LEVELS),
    weight: z.number().min(0).max(1),
    baseWeight: z.number().min(0).optional(),
    // Not held to 100: files written before defaults.importance had its maximum may hold more.
    importance: z.number().min(0),
    baseImportance: z.number().min(0).optional(),
    source: z.enum(MEMORY_SOURCES),
    verified: z.boolean(),
    createdAt: isoDate,
    updatedAt: isoDate,
    lastAccessedAt: isoDate.optional(),
    sources: z.array(z.string()).optional(),
    tags: z.array(z.string().min(1)).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    /** The text the memory was said in (`MemoryRecord.context`); left out, or "", when it has none. */
    context: z.string().optional(),
    /** Exact content when the text below cannot show it (edge whitespace, CR). */
    raw: z.string().optional(),
    sum: z.string().optional(),
  })
  .strict();
type Meta = z.output<typeof metaSchema>;

/** Where a file could not be read, for the person who has to fix it (its scope is added by `Reconciler.allProblems`). */
export interface LineProblem {
  /** Path relative to the store root, with forward slashes. */
  path: string;
  /** 1-based line number. */
  line: number;
  message: string;
}

/** A file that could not be read, and whose memories it may hold. */
export interface FileProblem extends LineProblem {
  /**
   * The scope whose memories the file holds. For a folder of the layout that is a symbolic link (not looked
   * behind), the scope its place names: `users/alice` alice's, `users/alice/memory` alice's, `users` the empty scope.
   */
  scope: Scope;
  /**
   * For a linked folder of scopes: the scope fields that scopes behind it may add to `scope`, with any value
   * (`users/alice` may hold alice's agents and sessions: `['agentId', 'sessionId']`). Absent when none may.
   */
  innerKeys?: ScopeKey[];
  /**
   * For a linked folder with a hashed name (`users/~…`, a long value's): the field it is a value of and its name.
   * It may hold memories of that field's one value whose folder name it is, not of every value.
   */
  hashed?: HashedFolder;
}

export type BlockStatus =
  /** Written by memloom and unchanged since. */
  | 'intact'
  /** Has memloom fields, but its text or fields were changed by hand. */
  | 'edited'
  /** Written by hand: no memloom field line yet. */
  | 'new';

export interface ParsedBlock {
  /** 1-based line of the `## ` heading. */
  line: number;
  status: BlockStatus;
  /** The record as the block reads (revision as written; scope from the folder). */
  record: MemoryRecord;
  /** The heading's date when it is `YYYY-MM-DD`. */
  headingDate?: string;
}

export type Segment = { kind: 'text'; text: string } | { kind: 'block'; block: ParsedBlock };

export interface ParsedFile {
  segments: Segment[];
  problems: LineProblem[];
}

export interface ParseContext {
  /** Path relative to the store root, for problems. */
  path: string;
  scope: Scope;
  /** Fields for blocks written by hand (no field line). */
  defaults: Pick<MemoryRecord, 'category'> & { atIso: string };
}

/** Split a Markdown file into its preamble, memory blocks and untouched text. */
export function parseMemoryFile(text: string, context: ParseContext): ParsedFile {
  // A byte order mark (Notepad saves UTF-8 with one) is not text: left in, the first heading would not read as
  // one. It is not written back: memloom writes UTF-8 without a BOM, which editors read the same.
  const lines = text.replace(/^\uFEFF/u, '').replace(/\r\n/gu, '\n').split('\n');
  const segments: Segment[] = [];
  const problems: LineProblem[] = [];
  const starts: number[] = [];
  lines.forEach((line, index) => {
    if (HEADING.test(line)) starts.push(index);
  });
  const firstStart = starts[0] ?? lines.length;
  const preamble = lines.slice(0, firstStart).join('\n');
  if (preamble.trim() !== '') segments.push({ kind: 'text', text: preamble });

  for (const [order, start] of starts.entries()) {
    const end = starts[order + 1] ?? lines.length;
    const blockLines = lines.slice(start, end);
    const heading = ((blockLines[0] as string).match(HEADING)?.[1] ?? '').trim();
    let bodyStart = 1;
    let meta: Meta | undefined;
    // The field line is the first non-blank line under the heading (a blank line slipped in is harmless).
    let metaIndex = 1;
    while (metaIndex < blockLines.length && (blockLines[metaIndex] as string).trim() === '') metaIndex++;
    const candidate = blockLines[metaIndex] ?? '';
    if (META_START.test(candidate)) {
      bodyStart = metaIndex + 1;
      const parsed = parseMeta(candidate);
      if ('error' in parsed) {
        problems.push({ path: context.path, line: start + metaIndex + 1, message: parsed.error });
        continue;
      }
      meta = parsed.meta;
    }
    const content = contentFrom(blockLines.slice(bodyStart));
    const headingDate = DATE_HEADING.test(heading) ? heading : undefined;
    if (!meta) {
      if (content === '') {
        // An empty block written by hand (a heading alone): kept as it is.
        segments.push({ kind: 'text', text: blockLines.join('\n') });
        continue;
      }
      if (headingDate && !isOnCalendar(headingDate)) {
        // Taken as it reads, 2024-02-30 would date the memory March 1: a typing slip, for the person to fix.
        problems.push({ path: context.path, line: start + 1, message: `the heading's date ${headingDate} is not a day of the calendar; correct it (YYYY-MM-DD)` });
        continue;
      }
      const text = headingDate || heading === '' ? content : `${heading}\n${content}`;
      segments.push({
        kind: 'block',
        block: { line: start + 1, status: 'new', record: handWritten(text, context, headingDate), ...(headingDate ? { headingDate } : {}) },
      });
      continue;
    }
    if (content === '' && meta.raw === undefined) {
      problems.push({ path: context.path, line: start + 1, message: `memory ${meta.id} has no text; write its text under the heading or delete the whole block` });
      continue;
    }
    const intact = meta.sum !== undefined && meta.sum === checksum(content, meta);
    // The raw text holds while the text below still shows it: a block whose fields alone were edited keeps it.
    const keepsRaw = meta.raw !== undefined && (intact || shownText(meta.raw) === content);
    const record = recordFrom(meta, keepsRaw ? (meta.raw as string) : content, context.scope);
    segments.push({ kind: 'block', block: { line: start + 1, status: intact ? 'intact' : 'edited', record, ...(headingDate ? { headingDate } : {}) } });
  }
  return { segments, problems };
}

/** Rendered blocks by record object: records are replaced, never changed in place. */
const rendered = new WeakMap<MemoryRecord, string>();

/** Render one memory as a block (ends with a blank line). */
export function renderBlock(record: MemoryRecord): string {
  let text = rendered.get(record);
  if (text === undefined) {
    text = renderUncached(record);
    rendered.set(record, text);
  }
  return text;
}

function renderUncached(record: MemoryRecord): string {
  const shown = shownText(record.content);
  // Text the block cannot show exactly (or no text at all) is kept whole in `raw`.
  const meta: Meta = metaFor(record, shown === record.content && shown !== '' ? undefined : record.content);
  meta.sum = checksum(shown, meta);
  return `## ${record.createdAt.slice(0, 10)}\n${renderMeta(meta)}\n${bodyFor(record.content)}\n\n`;
}

/**
 * The text a block written for `content` shows, exactly as parseMemoryFile reads it back: the file's CR LF
 * become LF, the line break after the body makes a CR at its end one too, and UTF-8 turns a lone surrogate
 * into U+FFFD (core's wellFormed).
 */
function shownText(content: string): string {
  return wellFormed(contentFrom(`${bodyFor(content)}\n`.replace(/\r\n/gu, '\n').split('\n')));
}

/** The fields of a put as its block's field line holds them: the reader's checks (metaSchema), all given. */
const putFieldsSchema = metaSchema
  .omit({ raw: true, sum: true })
  .extend({
    sources: z.array(z.string()),
    tags: z.array(z.string().min(1)),
    metadata: z.record(z.string(), z.unknown()),
  })
  // The record's other fields (content, scope) are not on the field line: left out, not refused.
  .strip();

/**
 * Why the block a record would be written as could not be read back (the field and what is wrong with it), or
 * undefined. A put is refused on it before anything is written: the reader refuses such a block (a weight of
 * 1.5, an empty tag, NaN written as null), which would make the whole file unreadable and the memory vanish.
 */
export function unreadableField(record: MemoryRecord): string | undefined {
  const parsed = putFieldsSchema.safeParse(record);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  return `${issue?.path.join('.') || 'fields'}: ${issue?.message ?? 'invalid'}`;
}

/** Render a whole file from its segments, with blocks rendered from records. */
export function renderFile(parts: Array<{ kind: 'text'; text: string } | { kind: 'record'; record: MemoryRecord }>): string {
  let out = '';
  for (const part of parts) {
    if (part.kind === 'text') {
      const text = part.text.replace(/\s+$/u, '');
      out += `${text}\n\n`;
    } else {
      out += renderBlock(part.record);
    }
  }
  return out;
}

/** The title and note at the top of a new MEMORY.md or daily note. */
export function defaultPreamble(title: string): string {
  return (
    `# ${title}\n\n` +
    '<!-- memloom: one "## YYYY-MM-DD" block per memory. Edit a block\'s text to correct it, delete a block to forget it, ' +
    'or add a block without a memloom line to add a memory; changes are picked up on the next read. ' +
    'A backup is written to backups/ before memloom overwrites this file. -->'
  );
}

/** The content the text below a heading shows (edge blank lines dropped, escapes undone). */
function contentFrom(lines: string[]): string {
  let first = 0;
  let last = lines.length;
  while (first < last && (lines[first] as string).trim() === '') first++;
  while (last > first && (lines[last - 1] as string).trim() === '') last--;
  return lines
    .slice(first, last)
    .map((line) => (ESCAPED.test(line) ? line.slice(1) : line))
    .join('\n');
}

function bodyFor(content: string): string {
  return content
    .replace(/\r\n/gu, '\n')
    .split('\n')
    // Tested without a CR at the end: the parser reads `##\r` followed by a line break as a heading.
    .map((line) => (NEEDS_ESCAPE.test(line.replace(/\r$/u, '')) ? `\\${line}` : line))
    .join('\n');
}

function parseMeta(line: string): { meta: Meta } | { error: string } {
  const json = line.match(META)?.[1]?.trim();
  if (json === undefined) return { error: 'the memloom field line must end with "-->" on the same line' };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return { error: `the memloom field line is not valid JSON (${(error as Error).message})` };
  }
  const parsed = metaSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || 'fields';
    return { error: `memloom field ${field}: ${issue?.message ?? 'invalid'}` };
  }
  return { meta: parsed.data };
}

function renderMeta(meta: Meta): string {
  // Escapes keep the JSON on one line and keep "-->" from closing the comment early.
  const json = JSON.stringify(meta)
    .replace(/</gu, '\\u003c')
    .replace(/>/gu, '\\u003e')
    .replace(/\u2028/gu, '\\u2028')
    .replace(/\u2029/gu, '\\u2029');
  return `<!-- memloom ${json} -->`;
}

function metaFor(record: MemoryRecord, raw: string | undefined): Meta {
  const meta: Meta = {
    id: record.id,
    revision: record.revision,
    category: record.category,
    type: record.type,
    level: record.level,
    weight: record.weight,
    importance: record.importance,
    source: record.source,
    verified: record.verified,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
  if (record.baseWeight !== record.weight) meta.baseWeight = record.baseWeight;
  if (record.baseImportance !== record.importance) meta.baseImportance = record.baseImportance;
  if (record.lastAccessedAt !== record.updatedAt) meta.lastAccessedAt = record.lastAccessedAt;
  if (record.sources.length > 0) meta.sources = record.sources;
  if (record.tags.length > 0) meta.tags = record.tags;
  if (Object.keys(record.metadata).length > 0) meta.metadata = record.metadata;
  if (record.context) meta.context = record.context;
  if (raw !== undefined) meta.raw = raw;
  return meta;
}

function recordFrom(meta: Meta, content: string, scope: Scope): MemoryRecord {
  return {
    id: meta.id,
    content,
    level: meta.level,
    weight: meta.weight,
    baseWeight: meta.baseWeight ?? meta.weight,
    importance: meta.importance,
    baseImportance: meta.baseImportance ?? meta.importance,
    category: meta.category,
    type: meta.type,
    scope: { ...scope },
    createdAt: meta.createdAt,
    updatedAt: meta.updatedAt,
    lastAccessedAt: meta.lastAccessedAt ?? meta.updatedAt,
    source: meta.source,
    verified: meta.verified,
    sources: meta.sources ?? [],
    // An empty context is none: the record has no key then.
    ...(meta.context ? { context: meta.context } : {}),
    tags: meta.tags ?? [],
    metadata: meta.metadata ?? {},
    revision: meta.revision,
  };
}

function handWritten(content: string, context: ParseContext, headingDate: string | undefined): MemoryRecord {
  // A past date in the heading (a day of the calendar: parseMemoryFile refused others) dates the memory; today's date or none means now.
  const at = headingDate && headingDate < context.defaults.atIso.slice(0, 10) ? `${headingDate}T00:00:00.000Z` : context.defaults.atIso;
  return {
    id: '',
    content,
    level: 'full',
    weight: 1,
    baseWeight: 1,
    importance: 1,
    baseImportance: 1,
    category: context.defaults.category,
    type: 'user',
    scope: { ...context.scope },
    createdAt: at,
    updatedAt: at,
    lastAccessedAt: at,
    source: 'user',
    verified: true,
    sources: [],
    tags: [],
    metadata: {},
    revision: 0,
  };
}

/** Checksum of what a block shows: its text and every field but `sum`. */
function checksum(content: string, meta: Meta): string {
  const { sum: _sum, ...fields } = meta;
  const ordered = Object.keys(fields)
    .sort()
    .map((key) => [key, fields[key as keyof typeof fields]]);
  return createHash('sha256').update(JSON.stringify([content, ordered])).digest('hex').slice(0, 12);
}
