import { yieldToSignals } from '../io.js';
import { MemloomError, reindex, type ConfigLayer, type MemloomErrorCode } from 'memloom';
import { numberOption, requirePositionals, type CommandSpec } from '../command.js';
import { InterruptedError } from '../exit-codes.js';
import { memoriesText, oneLine } from '../format.js';
import { EXISTING_STORE, withMemory } from './shared.js';

/** What opening a store with an embedder other than its own throws. */
const EMBEDDER_MISMATCHES: readonly MemloomErrorCode[] = ['EMBEDDER_MISMATCH', 'DIMENSION_MISMATCH'];

export const reindexCommand: CommandSpec = {
  name: 'reindex',
  summary: 'move the store to another embedder (with progress; resumes when run again)',
  usage: ['reindex <embedder> [--batch-size <n>] [options]'],
  description: [
    'Embeds every memory again with <embedder> (default, lexical, use-lite, transformers:<model>) and',
    'switches the store over in one step at the end; until then the store keeps answering with its old',
    'vectors. Interrupted, it resumes where it stopped when run again with the same embedder. Afterwards,',
    'configure the new embedder ("embedder" in memloom.config.json, MEMLOOM_EMBEDDER or --embedder).',
    'Stores that cannot re-index in place exit 4: the Markdown store rebuilds its derived index from',
    'the files once its .memloom/store.json is deleted and a command runs with the new embedder.',
  ].join('\n'),
  options: { 'batch-size': { type: 'string', value: 'n', description: 'memories embedded per call (default 64)' } },
  examples: ['memloom reindex lexical', 'memloom reindex transformers:Xenova/paraphrase-multilingual-MiniLM-L12-v2 --batch-size 32'],
  async run(context) {
    const [target] = requirePositionals(context, ['embedder']);
    if (context.globals.embedder) context.note('--embedder is ignored: reindex moves the store to <embedder>.');
    const batchSize = numberOption(context.values, 'batch-size', { min: 1, max: 4096, integer: true });
    const abort = new AbortController();
    context.io.signal?.addEventListener('abort', () => abort.abort(), { once: true });
    // The memory is built with the target embedder but never opened for it: reindex() works on the store.
    await withMemory(
      context,
      async ({ memory, resolved, missingStore }) => {
        // The default store not made yet (nothing configured) holds nothing to re-index, as other commands that only read find it empty.
        if (missingStore) {
          if (context.globals.json) {
            return context.printJson({ embedderId: memory.embedder.id, dimension: memory.embedder.dimension, total: 0, embedded: 0, resumed: 0, store: { location: missingStore, exists: false } });
          }
          return context.print(`No store at ${oneLine(missingStore)} yet: nothing to re-index ("memloom add", "memloom import" or "memloom init" makes it, with the embedder configured then).`);
        }
        // A Markdown store, which cannot re-index, is opened first, so that a missing one is named (MISSING_RESOURCE)
        // before the refusal, which says how it changes embedder instead. Made with another embedder (the usual
        // case: this one is the target), it refuses the target when opened: not the point here, the store lacks the
        // feature. (Other stores that cannot are refused by reindex() below without being opened: a Qdrant
        // collection is neither contacted nor made.)
        if (memory.store.name === 'markdown' && !memory.store.capabilities.reindex) {
          await memory.count().catch((error: unknown) => {
            if (!MemloomError.isInstance(error) || !EMBEDDER_MISMATCHES.includes(error.code)) throw error;
          });
          throw new MemloomError({
            code: 'NOT_SUPPORTED',
            backend: memory.store.name,
            message:
              'this store cannot re-index in place. A Markdown store moves to another embedder without an export: delete its .memloom/store.json (and, if you like, its .index folders), then run any command with the new embedder; every memory is embedded again from the Markdown',
          });
        }
        const progress = context.progress(`reindex ${oneLine(memory.embedder.id)}`);
        let last = { done: 0, total: 0 };
        let report;
        try {
          report = await reindex({
            store: memory.store,
            embedder: memory.embedder,
            contextWeight: memory.config.retrieval.contextWeight,
            ...(batchSize ? { batchSize } : {}),
            signal: abort.signal,
            onProgress: async (status) => {
              last = status;
              progress.update(status.done, status.total);
              await yieldToSignals();
            },
          });
        } catch (error) {
          if (abort.signal.aborted) throw new InterruptedError(`reindex interrupted at ${last.done} of ${memoriesText(last.total)}; run the same command again to resume`);
          throw error;
        } finally {
          progress.finish();
        }
        if (context.globals.json) return context.printJson(report);
        context.print(
          `re-indexed ${memoriesText(report.total)} with ${oneLine(report.embedderId)} (${report.dimension} dimensions): ${report.embedded} embedded now${report.resumed > 0 ? `, ${report.resumed} by an earlier run` : ''}`,
        );
        context.print(`Now use it: ${oneLine(whereToConfigure(resolved.layers, target!))}`);
      },
      // A store that does not exist has nothing to re-index: never create one here.
      { embedder: target!, ...EXISTING_STORE },
    );
  },
};

/**
 * How to switch to the new embedder, where the embedder is configured now. `layers` come from the
 * memory opened for the target embedder, whose first layer ("options") holds that override.
 */
function whereToConfigure(layers: readonly ConfigLayer[], target: string): string {
  const configured = layers.filter((layer) => layer.source !== 'options');
  const fromEnvironment = (layer: ConfigLayer) => layer.source.startsWith('environment');
  const file = configured.find((layer) => !fromEnvironment(layer));
  const embedderLayer = configured.find((layer) => layer.config.embedder !== undefined);
  if (embedderLayer && fromEnvironment(embedderLayer)) {
    const variable = embedderLayer.fieldSources?.embedder?.replace(/^environment variable /, '') ?? 'MEMLOOM_EMBEDDER';
    const orFile = file ? `, or set "embedder": "${target}" in ${file.source} (it comes before ${variable})` : '';
    return `set ${variable}=${target} (the embedder comes from that variable now)${orFile}, or pass --embedder ${target}.`;
  }
  if (file) return `set "embedder": "${target}" in ${file.source} (or pass --embedder ${target}).`;
  return `set "embedder": "${target}" in memloom.config.json ("memloom init --embedder ${target}" writes one), or MEMLOOM_EMBEDDER=${target}, or pass --embedder ${target}.`;
}
