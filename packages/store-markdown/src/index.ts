export { createMarkdownStore } from './markdown-store.js';
export type { MarkdownStore } from './markdown-store.js';
export type { MarkdownStoreOptions } from './options.js';
export { HAND_DELETE_GRACE_MS } from './reconcile.js';
export type { SyncReport } from './reconcile.js';
export type { FileProblem } from './block-format.js';
export { createMarkdownPolicyStorage, POLICY_SNAPSHOTS_KEPT } from './policy-storage.js';
export type { MarkdownPolicyStorageOptions } from './policy-storage.js';
export { assertSafeScope, encodeSegment, decodeSegment, scopeFolder } from './scope-path.js';
