export { testMemoryStore } from './store/suite.js';
export type { StoreSuiteOptions, StoreContext } from './store/fixtures.js';
export { HOSTILE_IDS, PATH_LIKE_IDS } from './store/scoping.js';
export { axis, towards, record, create, replace, rejectsWithCode } from './store/fixtures.js';
export { testEmbedder } from './embedder/embedder-suite.js';
export type { EmbedderSuiteOptions } from './embedder/embedder-suite.js';
