export { createInMemoryStore } from './in-memory-store.js';
export { createTestEmbedder, vectorWithSimilarity, axisVector } from './test-embedder.js';
export type { TestEmbedder, TestEmbedderOptions } from './test-embedder.js';
export { createFakeClock } from './fake-clock.js';
export type { FakeClock } from './fake-clock.js';
export { createScriptedModel, createHangingModel } from './scripted-model.js';
export type { ScriptedModel, ScriptStep } from './scripted-model.js';
export { createControlledModel } from './controlled-model.js';
export type { ControlledModel, PendingModelCall } from './controlled-model.js';
export { createInMemoryPolicyStorage, policyStoragePerScope } from './in-memory-policy-storage.js';
export type { InMemoryPolicyStorage } from './in-memory-policy-storage.js';
export { seededRandom } from './seeded-random.js';
// A fresh memory exactly as `add` creates one, for fixtures and benchmarks that write through a store.
export { createRecord } from '../records.js';
export type { NewRecordFields } from '../records.js';
