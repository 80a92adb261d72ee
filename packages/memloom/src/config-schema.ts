import { engineConfigSchema, policyOverridesSchema } from '@memloom/core';
import { z } from 'zod';

/** A path, URL or name: not empty, and not only spaces (a file named "  " is never what was meant). */
const filled = z.string().regex(/\S/u, 'must not be empty or blank');

/**
 * Where memories live. A string is the short form used in environment
 * variables: `sqlite:./memory.db`, `markdown:./memory`,
 * `qdrant:http://host:6333`, `memory:` (in process, nothing kept).
 * The object forms pass their other fields to the store's own factory,
 * which validates them.
 */
export const storeConfigSchema = z.union([
  z.string().min(1),
  // By type, so that an error names the field of the store meant (a Markdown store without its root).
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('sqlite'), path: filled.optional() }).loose(),
    z.object({ type: z.literal('markdown'), root: filled }).loose(),
    z.object({ type: z.literal('qdrant'), url: filled.optional(), apiKey: filled.optional(), collection: filled.optional() }).loose(),
    z.object({ type: z.literal('memory') }).strict(),
  ]),
]);
export type StoreConfig = z.input<typeof storeConfigSchema>;

/**
 * How text becomes vectors. Short forms: `default`, `lexical`, `use-lite`,
 * `transformers:<model id>`. The transformers form needs the optional
 * `@huggingface/transformers` and the model's files.
 */
export const embedderConfigSchema = z.union([
  z.string().min(1),
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('default'), cacheEntries: z.number().int().min(0).optional() }).strict(),
    z.object({ type: z.literal('lexical') }).loose(),
    z.object({ type: z.literal('use-lite') }).loose(),
    z.object({ type: z.literal('transformers'), model: filled.optional() }).loose(),
  ]),
]);
export type EmbedderConfig = z.input<typeof embedderConfigSchema>;

/** Everything a configuration file (or the environment) may say. */
export const memloomConfigSchema = engineConfigSchema
  .partial()
  .extend({
    store: storeConfigSchema.optional(),
    embedder: embedderConfigSchema.optional(),
    /** Scope applied when a call gives none. */
    scope: z
      .object({ userId: z.string().min(1).optional(), agentId: z.string().min(1).optional(), sessionId: z.string().min(1).optional() })
      .strict()
      .optional(),
    /** Seed 001 policy values (retrieve_limit, recent_days, …). */
    policy: policyOverridesSchema.optional(),
  })
  .strict();
export type MemloomConfig = z.input<typeof memloomConfigSchema>;

/**
 * Type a `memloom.config.ts` (or `.mjs`) without importing a type:
 * `export default defineConfig({ store: 'sqlite:./memory.db' })`.
 */
export function defineConfig(config: MemloomConfig): MemloomConfig {
  return config;
}
