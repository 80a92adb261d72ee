// Errors
export { describeValue, MemloomError, missingStoreError, readOnlyStoreError, toMemloomError } from './errors.js';
export type { MemloomErrorCode, MemloomErrorOptions } from './errors.js';

// Data model
export {
  MEMORY_LEVELS,
  MEMORY_CATEGORIES,
  MEMORY_TYPES,
  MEMORY_SOURCES,
  UPDATE_TRIGGERS,
  VERSION_ACTIONS,
  SCOPE_KEYS,
} from './types.js';
export type {
  MemoryLevel,
  MemoryCategory,
  MemoryType,
  MemorySource,
  UpdateTrigger,
  VersionAction,
  Scope,
  ScopeKey,
  MemoryRecord,
  MemoryVersion,
  MemoryFilter,
  ScoredMemory,
  ScoreParts,
} from './types.js';

// Contracts
export { systemClock } from './contracts.js';
export type {
  Clock,
  Embedder,
  EmbedOptions,
  LanguageModel,
  GenerateRequest,
  MemoryStore,
  StoreCapabilities,
  StoreOpenOptions,
  ListAfter,
  ListOrder,
  ListQuery,
  MemoryPage,
  PageQuery,
  VectorQuery,
  TextQuery,
  MemoryChange,
  ReindexStatus,
  StagedVector,
} from './contracts.js';

// Configuration
export {
  strategyConfigSchema,
  decayConfigSchema,
  freshnessConfigSchema,
  retrievalConfigSchema,
  limitsConfigSchema,
  recordDefaultsSchema,
  formatZodIssues,
  explainZodIssues,
  DEFAULT_CONTEXT_WEIGHT,
} from './config.js';
export type {
  StrategyConfig,
  StrategyConfigInput,
  DecayConfig,
  DecayConfigInput,
  FreshnessConfig,
  FreshnessConfigInput,
  RetrievalConfig,
  RetrievalConfigInput,
  LimitsConfig,
  RecordDefaults,
} from './config.js';
export { DEFAULT_RECALL_FILTER, engineConfigSchema, memoryFilterSchema } from './options.js';
export type { EngineConfig, EngineConfigInput } from './options.js';

// Strategy engine (seed 004)
export { decideUpdate, boostedWeight, upgradedLevel, levelRank, roundValue, SIMILARITY_TOLERANCE } from './update-strategy.js';
export type { MergeStrategy, UpdateDecision } from './update-strategy.js';

// Decay and compression (seeds 004, 002)
export { currentValues, decayedWeight, levelForAge, neverDecays, planMaintenance, baseWeightFor, baseImportanceFor, daysBetween, DAY_MS } from './decay.js';
export type { MaintenancePlan } from './decay.js';
export { compressDeterministic, mergeDeterministic, splitSentences } from './compression.js';
export type { MaintainOptions, MaintenanceReport, MaintenanceChange } from './maintenance.js';

// Freshness and index (seed 000)
export {
  DEFAULT_FRESHNESS,
  freshnessThresholdMs,
  shouldWarn,
  ageString,
  freshnessText,
  freshnessNote,
  indexAnnotation,
  truncateIndex,
  MAX_INDEX_LINES,
  MAX_INDEX_BYTES,
} from './freshness.js';
export type { TruncatedIndex } from './freshness.js';
export { renderIndex, renderContextBlock, renderIndexBlock, indexLine, escapeFence, longestFitting, fitLines } from './render.js';
export { recentNotes, MAX_RECENT_NOTES } from './recent-notes.js';
export type { RecentNotesOptions } from './recent-notes.js';

// Retrieval
export { rankCandidates, combineScore, recencyScore, dateScore } from './retrieval.js';
export type { RankedMemory } from './retrieval.js';

// Working memory (seed 003)
export { WorkingMemoryTracker, workingMemoryConfigSchema, workingMemoryConfigFromEnv } from './working-memory.js';
export type { WorkingMemoryConfig, WorkingMemoryConfigInput, WorkingMemoryStatus, WorkingMemoryCheck } from './working-memory.js';

// Text utilities shared by stores and embedders
export { tokenize, keywordTerms, distinctiveKeywordTerms, hasCjk, TOKENIZER_VERSION } from './text/tokenize.js';
export { segmentInPieces, SEGMENT_PIECE_CHARS } from './text/segment-in-pieces.js';
export { isIsoTime, isOnCalendar } from './time-text.js';
export { toEpochMs, assertNotFuture } from './options.js';
export { FUTURE_AT_TOLERANCE_MS, MAX_IMPORTANCE, MAX_TIMEOUT_MS } from './config.js';
export { KeyedLock } from './keyed-lock.js';
export { abortable } from './abort-signal.js';
export { CONTROL_OR_BIDI_SOURCE, controlCharacterAt } from './control-characters.js';
export { byScoreThenId, scoreThenId } from './score-order.js';
export { excerpt, hasLoneSurrogate, lastCharacters, loneSurrogatePath, pairSafeEnd, wellFormed } from './well-formed.js';
export { dataPath, jsonCopy, jsonDataProblem, MAX_DATA_DEPTH, MAX_STORED_DATA_DEPTH } from './json-data.js';
export type { DataProblem } from './json-data.js';
export type { TokenizeOptions } from './text/tokenize.js';
export { keywords } from './text/keywords.js';
export { porterStem } from './text/porter-stemmer.js';
export { ENGLISH_STOPWORDS, CHINESE_STOPWORDS } from './text/stopwords.js';
export { TextIndex } from './text/bm25.js';
export { CHINESE_DISCOURSE_VERSION, CHINESE_DISCOURSE_WORDS, withoutChineseDiscourse } from './text/query-text.js';
export { periodNamedIn } from './text/query-dates.js';
export type { NamedPeriod } from './text/query-dates.js';
export type { TextIndexOptions, TextHit } from './text/bm25.js';
export { cosineSimilarity, normalizeVector, assertValidVector, blendVectors, documentVectors } from './vector.js';
export { FlatVectorIndex, flatVectorIndexSupported } from './vector-index/flat-vector-index.js';
export type { VectorHit } from './vector-index/flat-vector-index.js';
export { validateScope, scopeEntries, isEmptyScope, scopeDescription, scopeKey, inScope, matchesFilter, filterMatcher } from './scope.js';
export { assertDeleteScope, assertQueryScope, assertRecordScope } from './query-checks.js';
export { assertPutChange, assertPutNumbering, assertQueryInput, assertRecordContext, assertRecordId, assertRecordMetadata, assertRecordTimes, assertUsableVector, assertWellFormedRecord, keywordText, listCursor, listOrder, listRecords, matchingRecords, pastCursor, foreignCursor, numericPageQuery, pageLimit, pageRecords, searchTextIndex } from './record-queries.js';
export type { ListCursor, ListPlace, RecordEntry, SequencedEntry } from './record-queries.js';

// Language model helpers
export { defaultPrompts } from './prompts.js';
export type { Prompts, PromptText, PromptMemory, PromptMessage, PromptPolicyParameter, ReviewRound } from './prompts.js';
export { callModel, cleanModelText } from './model-text.js';
export type { ModelCallResult } from './model-text.js';

// The facade
export { createMemory, DEFAULT_CONTEXT_TURNS } from './memory.js';
export { timeOrderedId, type RandomBytes } from './ids.js';
export type {
  Memory,
  CreateMemoryOptions,
  AddOptions,
  AddResult,
  AddTurn,
  AddTurnsOptions,
  SearchOptions,
  RenderContextOptions,
  SearchResult,
  ListOptions,
  UpdatePatch,
  UpdateOptions,
  ScopedOptions,
  RestoreOptions,
  DeleteOptions,
  RenderOptions,
  Logger,
} from './memory-types.js';

// Moving memories between stores
export { copyMemories } from './copy-memories.js';
export { importStandIn, newIdProblem } from './records.js';
export { historiesOf, pagesOldestFirst, SNAPSHOT_ROUNDS, snapshotsOf, vectorsOf } from './store-reads.js';
export type { MemorySnapshot, OldestFirstQuery } from './store-reads.js';
export type { CopyMemoriesOptions, CopyProgress } from './copy-memories.js';

// Re-index: move a store to another embedder
export { reindex } from './reindex.js';
export type { ReindexOptions, ReindexProgress, ReindexReport } from './reindex.js';

// Policy (seed 001)
export { policySchema, policyOverridesSchema, DEFAULT_POLICY, resolvePolicy } from './policy.js';
export type { Policy, PolicyKey, PolicyOverrides, PolicyStorage } from './policy.js';

// The LLM-driven pipeline (seeds 001, 002): extraction, review, summaries, compression, evolution
export { createMemoryPipeline } from './pipeline/pipeline.js';
export type { MemoryPipeline, CreateMemoryPipelineOptions, AfterTurnInput, AfterTurnReport, EvolveInput } from './pipeline/pipeline.js';
export { pipelineConfigSchema } from './pipeline/pipeline-config.js';
export type { PipelineConfig, PipelineConfigInput } from './pipeline/pipeline-config.js';
export { MESSAGE_ROLES, estimateTokens } from './pipeline/conversation.js';
export type { ConversationMessage, MessageRole, TurnInput, TurnMessage } from './pipeline/conversation.js';
export type {
  ExtractionReport,
  AppliedOperation,
  SkippedOperation,
  DecisionSource,
  ReviewReport,
  ReviewOutcome,
  ReviewDecision,
} from './pipeline/reports.js';
export { parseExtraction } from './pipeline/extraction-parser.js';
export type { ExtractionOperation, ParsedExtraction } from './pipeline/extraction-parser.js';
export { extractFactsDeterministic } from './pipeline/extraction-fallback.js';
export { parseReviewAnswer } from './pipeline/review-parser.js';
export type { ReviewAnswer, ReviewVerdict } from './pipeline/review-parser.js';
export { PROMOTION_REVIEW_KEY } from './pipeline/review.js';
export type { ReviewInput } from './pipeline/review.js';
export { planSessionSummary, forceCompression } from './pipeline/session-plan.js';
export type { SessionPlan, SessionPlanOptions } from './pipeline/session-plan.js';
export { summarizeMessagesDeterministic, SUMMARY_MESSAGE_ID_PREFIX } from './pipeline/session-summary.js';
export type { SessionSummaryResult, SummarizeSessionOptions } from './pipeline/session-summary.js';
export { ABSORBED_KEY } from './pipeline/long-term-compression.js';
export type { CompressLongTermOptions, LongTermCompressionReport, AppliedConsolidation } from './pipeline/long-term-compression.js';
export { parseConsolidation, planDeterministicConsolidation } from './pipeline/consolidation.js';
export type { ConsolidationGroup } from './pipeline/consolidation.js';
export { validateSuggestions, describePolicy } from './pipeline/evolution.js';
export type { EvolutionReport, PolicyChange, RejectedSuggestion } from './pipeline/evolution.js';
export { parseJsonObject } from './pipeline/json-text.js';
export type { JsonObjectResult } from './pipeline/json-text.js';
