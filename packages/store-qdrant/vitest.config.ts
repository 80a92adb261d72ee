import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Against a real (possibly remote, replicated) Qdrant a case makes dozens of round trips.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
