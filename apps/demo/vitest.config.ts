import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The test runs the built demo, whose part 2 loads the offline embedder (28 MB) in two child processes.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
