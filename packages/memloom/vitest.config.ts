import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The default embedder loads USE-lite (28 MB) on first use: seconds on a busy 2-core CI machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
