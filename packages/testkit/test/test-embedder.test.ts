import { createTestEmbedder } from '@memloom/core/testing';
import { testEmbedder } from '../src/index.js';

// Core's deterministic test embedder: a hashed bag of tokens, so rewordings that share words score close.
testEmbedder({
  name: 'core test embedder',
  create: () => createTestEmbedder(),
  tolerance: 0,
});
