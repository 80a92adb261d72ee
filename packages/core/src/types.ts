/** How much of a memory's original text is kept, from most to least. */
export const MEMORY_LEVELS = ['full', 'summary', 'tag', 'trace', 'archive'] as const;
export type MemoryLevel = (typeof MEMORY_LEVELS)[number];

/** Seed 002's layers: `system` and `core` never decay, `fact` decays slowly, `episode` fast. */
export const MEMORY_CATEGORIES = ['system', 'core', 'fact', 'episode'] as const;
export type MemoryCategory = (typeof MEMORY_CATEGORIES)[number];

/** What a memory is about; freshness thresholds can differ per type (seed 000). */
export const MEMORY_TYPES = ['user', 'feedback', 'project', 'reference'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

/** Who wrote the memory. */
export const MEMORY_SOURCES = ['user', 'background_ai', 'system'] as const;
export type MemorySource = (typeof MEMORY_SOURCES)[number];

/**
 * What caused a change. The first three are seed 004's triggers; the others
 * name the remaining ways a memory changes so that history reads plainly.
 */
export const UPDATE_TRIGGERS = [
  'user_mention',
  'passive_decay',
  'manual_edit',
  'restore',
  'review',
  'extraction',
  'import',
] as const;
export type UpdateTrigger = (typeof UPDATE_TRIGGERS)[number];

/** Who a memory belongs to. Every given field must match for a memory to be in scope. */
export interface Scope {
  userId?: string;
  agentId?: string;
  sessionId?: string;
}

export const SCOPE_KEYS = ['userId', 'agentId', 'sessionId'] as const;
export type ScopeKey = (typeof SCOPE_KEYS)[number];

/** One memory, as stored. Timestamps are ISO 8601 strings in UTC. */
export interface MemoryRecord {
  id: string;
  content: string;
  level: MemoryLevel;
  /** Current weight, 0..1: decays with age, rises when the memory is mentioned again. */
  weight: number;
  /** Weight at `updatedAt`, from which passive decay is computed: weight = baseWeight / (1 + a·days). */
  baseWeight: number;
  /** Seed 002 importance: 1.0 by default, +0.3 per real use, decays per category; >= 3.0 never decays. */
  importance: number;
  /** Importance at `updatedAt`, from which per-category decay is computed. */
  baseImportance: number;
  category: MemoryCategory;
  type: MemoryType;
  scope: Scope;
  createdAt: string;
  /** The memory's historical timestamp: only an activation (a merge) refreshes it. */
  updatedAt: string;
  lastAccessedAt: string;
  source: MemorySource;
  /** True when the user stated or confirmed it; false when an AI inferred it. */
  verified: boolean;
  /** Ids of the messages or turns the memory came from, kept through merges. */
  sources: string[];
  /**
   * The text the memory was said in (`add(…, { context })`, e.g. the turn or
   * two before it in a conversation), absent when none was given. It helps
   * find the memory: it is blended into the stored vector and indexed for
   * keyword search beside the content (see `keywordText`), but it is not the
   * memory's content and merges are decided without it. A merge keeps the
   * newest context given; compression to a level below `full` drops it.
   */
  context?: string;
  tags: string[];
  /** JSON data (`jsonDataProblem`): stores refuse a put of anything else with INVALID_INPUT (`assertRecordMetadata`). */
  metadata: Record<string, unknown>;
  /** Number of the latest version; 1 after creation. Used for optimistic concurrency. */
  revision: number;
}

/** What a change did, in one word. */
export const VERSION_ACTIONS = ['create', 'merge', 'boost', 'compress', 'decay', 'edit', 'restore', 'promote', 'review'] as const;
export type VersionAction = (typeof VERSION_ACTIONS)[number];

/** One entry of a memory's history. `after` is the record as it became. */
export interface MemoryVersion {
  memoryId: string;
  /** 1-based; equals `after.revision`. */
  version: number;
  /** When the change was made (ISO 8601). */
  at: string;
  trigger: UpdateTrigger;
  action: VersionAction;
  reason: string;
  before: MemoryRecord | null;
  after: MemoryRecord;
}

/** Field filters; every given field must match. Arrays mean "any of". */
export interface MemoryFilter {
  category?: MemoryCategory | MemoryCategory[];
  type?: MemoryType | MemoryType[];
  level?: MemoryLevel | MemoryLevel[];
  source?: MemorySource | MemorySource[];
  verified?: boolean;
  /** The memory has at least one of these tags. */
  tags?: string[];
  /** Equality on top-level metadata keys. */
  metadata?: Record<string, string | number | boolean>;
  /**
   * The memory's id is one of these (an empty list matches none). In `search`, only these
   * memories are ranked, each scored as a search without `ids` scores it (see `Memory.search`).
   */
  ids?: string[];
}

/** A record with a score from a store query (higher is better). */
export interface ScoredMemory {
  memory: MemoryRecord;
  score: number;
}

/** The pieces of a retrieval score. Each part is in 0..1. */
export interface ScoreParts {
  semantic: number;
  text: number;
  weight: number;
  recency: number;
  /**
   * Present only when the query names a day or month with its year (`periodNamedIn`): 1 when the
   * memory was created within it (widened by a day on each side), else 0.
   */
  date?: number;
}
