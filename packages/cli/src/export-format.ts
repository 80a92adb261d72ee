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

export const recordSchema = z
  .object({
    id: z.string().min(1),
    content: z.string(),
    level: z.enum(MEMORY_LEVELS),
    weight: z.number().finite(),
    baseWeight: z.number().finite(),
    importance: z.number().finite(),
    baseImportance: z.number().finite(),
    category: z.enum(MEMORY_CATEGORIES),
    type: z.enum(MEMORY_TYPES),
    scope: scopeSchema,
    createdAt: isoDate,
    updatedAt: isoDate,
    lastAccessedAt: isoDate,
    source: z.enum(MEMORY_SOURCES),
    verified: z.boolean(),
    sources: z.array(z.string()),
    context: z.string().optional(),
    tags: z.array(z.string()),
    metadata: z.record(z.string(), z.unknown()),
    revision: z.number().int().min(1),
  })
  .strict();

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

const lineSchema = z
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

export function parseLine(text: string, source: string, lineNumber: number): ExportLine {
  const parsed = lineSchema.safeParse(parseJson(text, source, lineNumber));
  if (!parsed.success) throw invalid(source, lineNumber, formatZodIssues(parsed.error));
  return parsed.data as ExportLine;
}

function parseJson(text: string, source: string, lineNumber: number): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalid(source, lineNumber, `not JSON: ${(error as Error).message}`);
  }
}

function invalid(source: string, lineNumber: number, message: string): MemloomError {
  return new MemloomError({ code: 'INVALID_INPUT', backend: 'cli', message: `${source}, line ${lineNumber}: ${message}`, details: { source, line: lineNumber } });
}
