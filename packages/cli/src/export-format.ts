import {
  MEMORY_CATEGORIES,
  MEMORY_LEVELS,
  MEMORY_SOURCES,
  MEMORY_TYPES,
  MemloomError,
  UPDATE_TRIGGERS,
  VERSION_ACTIONS,
  formatZodIssues,
  hasLoneSurrogate,
  isIsoTime,
  limitsConfigSchema,
  newIdProblem,
  validateScope,
  type LimitsConfig,
  type MemoryRecord,
  type MemoryVersion,
  type Scope,
} from '@memloom/core';
import { z } from 'zod';

/**
 * The export file: JSON Lines. The first line is a header, each further
 * line one memory with its whole history (and, with --vectors, its vector):
 *
 *   {"memloom":"export","format":1,"exportedAt":…,"store":"sqlite","embedder":{"id":…,"dimension":512},"scope":{},"count":2,"vectors":false}
 *   {"memory":{…record…},"versions":[{…version 1…},{…version 2…}]}
 */
export const EXPORT_FORMAT = 1;

/** A scope id as core takes one: not empty, and no lone half of a UTF-16 pair (two such ids would be one user). */
const scopeId = z
  .string()
  .min(1)
  .refine((value) => !hasLoneSurrogate(value), 'holds a lone half of a UTF-16 pair');
const scopeSchema = z.object({ userId: scopeId.optional(), agentId: scopeId.optional(), sessionId: scopeId.optional() }).strict();
/** Times as memloom writes them (the stores order by them as text): ISO 8601, on a day the calendar has. */
const isoDate = z.string().refine(isIsoTime, 'must be an ISO 8601 time on the calendar, such as 2024-03-01T09:00:00.000Z');

/** Labels (tags, sources) as core takes them: 1 to 512 characters each. */
const label = z.string().min(1).max(512);

/**
 * A memory as core would have written it, within the memory's limits: content
 * (and context) not blank and at most `limits.maxContentLength` long, a scope
 * core's `validateScope` takes, weight 0 to 1, importance 0 to 100 (the ranges
 * `update` and `add` accept), tags of 1 to 512 characters (any number: a
 * store may hold more than `limits.maxTags` from merges of earlier versions).
 */
function recordSchemaFor(limits: LimitsConfig) {
  const text = z.string().superRefine((value, issues) => {
    const length = value.trim().length;
    if (length === 0) issues.addIssue({ code: 'custom', message: 'is empty' });
    else if (length > limits.maxContentLength) issues.addIssue({ code: 'custom', message: `is ${length} characters long; the limit is ${limits.maxContentLength} (limits.maxContentLength)` });
  });
  const scope = scopeSchema.superRefine((value, issues) => {
    try {
      validateScope(value, limits.maxScopeLength, 'cli');
    } catch (error) {
      issues.addIssue({ code: 'custom', message: MemloomError.isInstance(error) ? error.reason : String(error) });
    }
  });
  return z
    .object({
      id: z.string().min(1),
      content: text,
      level: z.enum(MEMORY_LEVELS),
      weight: z.number().min(0).max(1),
      baseWeight: z.number().finite().min(0),
      // Not held to 100: a store may hold more, written before defaults.importance had its maximum.
      importance: z.number().finite().min(0),
      baseImportance: z.number().finite().min(0),
      category: z.enum(MEMORY_CATEGORIES),
      type: z.enum(MEMORY_TYPES),
      scope,
      createdAt: isoDate,
      updatedAt: isoDate,
      lastAccessedAt: isoDate,
      source: z.enum(MEMORY_SOURCES),
      verified: z.boolean(),
      sources: z.array(label),
      context: text.optional(),
      // Not held to maxTags: memories merged before 0.2 could hold more, and an export of them must import.
      tags: z.array(label),
      metadata: z.record(z.string(), z.unknown()),
      revision: z.number().int().min(1),
    })
    .strict();
}

function lineSchemaFor(limits: LimitsConfig) {
  const recordSchema = recordSchemaFor(limits);
  const versionSchema = z
    .object({
      memoryId: z.string().min(1),
      version: z.number().int().min(1),
      at: isoDate,
      trigger: z.enum(UPDATE_TRIGGERS),
      action: z.enum(VERSION_ACTIONS),
      reason: z.string(),
      before: recordSchema.nullable(),
      after: recordSchema,
    })
    .strict();
  return z
    .object({
      memory: recordSchema,
      versions: z.array(versionSchema),
      vector: z.array(z.number().finite()).optional(),
    })
    .strict()
    .superRefine((line, issues) => {
      line.versions.forEach((version, index) => {
        if (version.memoryId !== line.memory.id) issues.addIssue({ code: 'custom', path: ['versions', index, 'memoryId'], message: `must be ${line.memory.id}` });
        if (version.version > line.memory.revision) issues.addIssue({ code: 'custom', path: ['versions', index, 'version'], message: `is past the memory's revision ${line.memory.revision}` });
      });
    });
}

export const headerSchema = z
  .object({
    memloom: z.literal('export'),
    format: z.number().int(),
    exportedAt: isoDate,
    store: z.string(),
    embedder: z.object({ id: z.string().min(1), dimension: z.number().int().min(1) }).strict(),
    scope: scopeSchema,
    count: z.number().int().min(0),
    vectors: z.boolean(),
  })
  .strict();

export interface ExportHeader {
  memloom: 'export';
  format: number;
  exportedAt: string;
  store: string;
  embedder: { id: string; dimension: number };
  scope: Scope;
  count: number;
  vectors: boolean;
}

export interface ExportLine {
  memory: MemoryRecord;
  versions: MemoryVersion[];
  vector?: number[];
}

/** Parse and check the header line (INVALID_INPUT naming the line, SCHEMA_TOO_NEW for a newer format). */
export function parseHeader(text: string, source: string): ExportHeader {
  const value = parseJson(text, source, 1);
  if (typeof value === 'object' && value !== null && (value as { memloom?: unknown }).memloom === 'export') {
    const format = (value as { format?: unknown }).format;
    if (typeof format === 'number' && format > EXPORT_FORMAT) {
      throw new MemloomError({
        code: 'SCHEMA_TOO_NEW',
        backend: 'cli',
        message: `${source} is export format ${format}; this memloom reads format ${EXPORT_FORMAT}: upgrade @memloom/cli`,
      });
    }
  } else {
    throw invalid(source, 1, 'the first line is not a memloom export header ({"memloom":"export",…}); was the file made by "memloom export"?');
  }
  const parsed = headerSchema.safeParse(value);
  if (!parsed.success) throw invalid(source, 1, formatZodIssues(parsed.error));
  return parsed.data as ExportHeader;
}

const DEFAULT_LIMITS = limitsConfigSchema.parse({});
/** One schema per limits object (a memory's config keeps its own): building one per line would be slow. */
const lineSchemas = new WeakMap<LimitsConfig, ReturnType<typeof lineSchemaFor>>();

/** Parse and check one memory line against the memory's limits (INVALID_INPUT naming the line and the field). */
export function parseLine(text: string, source: string, lineNumber: number, limits: LimitsConfig = DEFAULT_LIMITS): ExportLine {
  let lineSchema = lineSchemas.get(limits);
  if (!lineSchema) {
    lineSchema = lineSchemaFor(limits);
    lineSchemas.set(limits, lineSchema);
  }
  const parsed = lineSchema.safeParse(parseJson(text, source, lineNumber));
  if (!parsed.success) throw invalid(source, lineNumber, formatZodIssues(parsed.error));
  return parsed.data as ExportLine;
}

/**
 * A copy import creates each memory the store lacks under the file's id: one no store creates (core's
 * `newIdProblem`: blank, longer than 256 characters, a control character or a bidi control) is refused with
 * its line (INVALID_INPUT), as the other line checks are, before its batch is written. Merge mode needs no
 * such check: it adds the content under new ids.
 */
export function assertNewIdOnLine(line: ExportLine, source: string, lineNumber: number): void {
  const problem = newIdProblem(line.memory.id);
  if (problem) throw invalid(source, lineNumber, `memory.id: ${problem}`, { field: 'memory.id' });
}

function parseJson(text: string, source: string, lineNumber: number): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalid(source, lineNumber, `not JSON: ${(error as Error).message}`, { notJson: true });
  }
}

function invalid(source: string, lineNumber: number, message: string, details: Record<string, unknown> = {}): MemloomError {
  return new MemloomError({ code: 'INVALID_INPUT', backend: 'cli', message: `${source}, line ${lineNumber}: ${message}`, details: { source, line: lineNumber, ...details } });
}

/** Whether an error is a line that is not JSON at all (a file cut mid-line), not a memory that breaks a rule. */
export function isNotJsonLine(error: unknown): boolean {
  return MemloomError.isInstance(error) && error.code === 'INVALID_INPUT' && error.details?.notJson === true;
}
