// Agent middleware
export { createMemloomMiddleware } from './middleware.js';
export type { MemloomMiddlewareOptions, MemloomMiddlewareStep } from './middleware.js';

// Tools
export {
  createMemloomTools,
  memorySearchTool,
  memoryAppendTool,
  memoryForgetTool,
  DEFAULT_RECALL_FILTER,
  DAILY_NOTE_TAG,
} from './tools.js';
export type { MemloomToolsOptions } from './tools.js';
export { MemloomTool } from './memloom-tool.js';
export type { MemloomToolFields, ToolCallInfo } from './memloom-tool.js';
export { workingMemoryWriteTool, readOverview, writeOverview, overviewScope, WORKING_MEMORY_TAG, WORKING_MEMORY_TOOL } from './overview.js';

// Errors
export { memloomErrorOf } from './errors.js';

// Scope
export { resolveScope } from './scope.js';
export type { ScopeOption, RunInfo } from './scope.js';

// Conversations as core's pipeline sees them
export { toConversation, fromSessionSummary, summaryMessage } from './conversation.js';
export { countMessageTokens } from './tokens.js';
export type { TokenCounter } from './tokens.js';

// LangGraph store
export { MemloomStore, STORE_ITEM_TAG } from './store.js';
export type { MemloomStoreOptions } from './store.js';

// Chat message history
export { MemloomChatMessageHistory, CHAT_MESSAGE_TAG, CHAT_SUMMARY_TAG } from './chat-history.js';
export type { MemloomChatMessageHistoryOptions } from './chat-history.js';

// Adapters
export { fromLangChainEmbeddings, fromLangChainChatModel, toLanguageModel, MemloomEmbeddings } from './adapters.js';
export type { FromLangChainEmbeddingsOptions, ChatModelLike } from './adapters.js';
