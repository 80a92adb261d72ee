import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // End-to-end cases run the built CLI as a child process and load the offline embedder.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
