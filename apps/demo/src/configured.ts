import { createMemory, resolveMemloomConfig } from 'memloom';
import { heading, printDecision } from './print.js';

/**
 * The application of part 2. It names no backend: createMemory() takes the
 * store and the embedder from the configuration (options, then the nearest
 * memloom.config.json, then MEMLOOM_* variables, then the embedded default).
 * main.ts runs this same file twice with different configurations.
 */
async function main(): Promise<void> {
  const resolved = await resolveMemloomConfig();
  const memory = await createMemory();
  try {
    heading(`backend: ${memory.store.name} (store from ${resolved.store.source}: ${JSON.stringify(resolved.store.config)})`);
    console.log(`  embedder: ${memory.embedder.id} (${memory.embedder.dimension} dimensions, offline)`);
    const scope = { userId: 'alice' };
    for (const text of ['I live in Lisbon and work as a nurse', 'My sister Emma lives in Porto', 'I live in Lisbon and I work as a nurse']) {
      printDecision('alice says', text, await memory.add(text, { scope }));
    }
    const [best] = await memory.search('where does my sister live?', { scope, limit: 1 });
    console.log(`  search "where does my sister live?" -> ${best?.memory.content} (score ${best?.score.toFixed(3)})`);
    // A reply is only clear with what it answers: the question is kept as the memory's context.
    const question = 'Do you still go to the pottery class on Thursdays?';
    printDecision('alice answers', 'Yes, every week since March', await memory.add('Yes, every week since March', { scope, context: question }));
    const [pottery] = await memory.search('pottery', { scope, limit: 1 });
    console.log(`  search "pottery" -> ${pottery?.memory.content} (its context: "${pottery?.memory.context}")`);
    console.log(`  ${await memory.count({ scope })} memories for alice`);
  } finally {
    await memory.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
