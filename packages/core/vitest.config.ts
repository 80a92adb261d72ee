import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A few cases build thousands of vectors or texts (the flat index's approximate search: about 1 s
    // alone, 9 s on a clean-clone CI run sharing two cores); the 5 s default failed them there.
    testTimeout: 60_000,
  },
});
