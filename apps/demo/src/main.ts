import { createMemory } from '@memloom/core';
import { axisVector, createFakeClock, createInMemoryStore, createTestEmbedder, vectorWithSimilarity } from '@memloom/core/testing';
import { heading, printDecision, printMemories } from './print.js';
import { SEED_004_STORY, tellStory } from './story.js';

/**
 * The first demo: seed 004's story on the in-memory store with a simulated
 * clock. Similarities come from a test embedder with chosen vectors, so the
 * story is exactly the seed's (0.96, 0.70 and 0.19 for the three mentions).
 */
async function main(): Promise<void> {
  const DIM = 16;
  const embedder = createTestEmbedder({
    dimension: DIM,
    vectors: {
      '我叫张三，是一名AI工程师，目前在北京工作': axisVector(DIM, 0),
      '我喜欢喝咖啡，每天早上一杯拿铁': axisVector(DIM, 1),
      '我养了一只橘猫，名字叫小橘': axisVector(DIM, 2),
      '我是AI工程师张三': vectorWithSimilarity(DIM, 0, 5, 0.96),
      '我现在更喜欢喝茶了，偶尔喝咖啡': vectorWithSimilarity(DIM, 1, 6, 0.7),
      '我下周要去东京出差': vectorWithSimilarity(DIM, 0, 7, 0.2),
    },
  });
  const clock = createFakeClock('2024-01-01T10:00:00.000Z');
  const memory = createMemory({ store: createInMemoryStore(), embedder, clock });
  const scope = { userId: 'zhangsan' };

  console.log('memloom demo: seed 004 on the in-memory store, simulated clock, scripted similarities');
  await tellStory(memory, clock, SEED_004_STORY, scope);

  heading('Day 105: what the user has now');
  printMemories(await memory.list({ scope }));

  heading('Another user in English, same store: scopes never mix');
  const other = { userId: 'alice' };
  for (const text of ['I prefer window seats on flights', 'My sister Emma lives in Lisbon']) {
    printDecision('alice says', text, await memory.add(text, { scope: other }));
  }
  const results = await memory.search('where does my sister live?', { scope: other, limit: 1 });
  console.log(`  search "where does my sister live?" -> ${results[0]?.memory.content} (score ${results[0]?.score.toFixed(3)})`);

  heading('MEMORY.md for zhangsan (freshness annotations from seed 000)');
  console.log(await memory.renderIndex({ scope }));

  heading('History of the engineer memory');
  const [engineer] = await memory.search('AI工程师', { scope, limit: 1 });
  for (const version of await memory.history(engineer!.memory.id)) {
    console.log(`  v${version.version} ${version.at.slice(0, 10)} ${version.trigger}/${version.action}: ${version.after.content}`);
  }
  await memory.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
