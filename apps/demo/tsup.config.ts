import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/main.ts', 'src/configured.ts'],
  format: ['esm'],
  clean: true,
  target: 'node20',
});
