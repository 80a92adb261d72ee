import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Child-process tests (SIGKILL mid-write, two writers racing) take a few seconds each.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
