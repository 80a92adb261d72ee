import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
      // Day 15's merge: the mention with what day 10's summary hid (kept in history); it stays where the mention is.
      '我是AI工程师张三。目前在北京工作': vectorWithSimilarity(DIM, 0, 5, 0.96),
      '我现在更喜欢喝茶了，偶尔喝咖啡': vectorWithSimilarity(DIM, 1, 6, 0.7),
      '我下周要去东京出差': vectorWithSimilarity(DIM, 0, 7, 0.2),
    },
  });
  const clock = createFakeClock('2024-01-01T10:00:00.000Z');
  // Seed 000's freshness warnings are off unless configured: {} is its 24 h default.
  const memory = createMemory({ store: createInMemoryStore(), embedder, clock, freshness: {} });
  const scope = { userId: 'zhangsan' };

  console.log('memloom demo, part 1: seed 004 on the in-memory store, simulated clock, scripted similarities');
  console.log('(the similarities are chosen to be the seed\'s, not computed: part 2 uses a real embedder)');
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

  configuredBackends();
}

/**
 * Part 2: one application file (configured.ts) run twice, in a temporary
 * folder each time, with nothing changed but the configuration: first none
 * at all (the embedded default: SQLite + the offline embedder), then
 * MEMLOOM_STORE=markdown:<folder>. Offline: no server, no key, no download.
 */
function configuredBackends(): void {
  heading('Part 2: the same application code on two backends, chosen by configuration alone');
  const script = join(dirname(fileURLToPath(import.meta.url)), 'configured.js');
  const root = mkdtempSync(join(tmpdir(), 'memloom-demo-'));
  // The demo's own configuration only: none of the caller's MEMLOOM_* variables.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MEMLOOM_')));
  try {
    const runs = [
      { label: 'no configuration at all', folder: join(root, 'default'), env },
      { label: `MEMLOOM_STORE=markdown:${join(root, 'markdown', 'memory')}`, folder: join(root, 'markdown'), env: { ...env, MEMLOOM_STORE: `markdown:${join(root, 'markdown', 'memory')}` } },
    ];
    for (const run of runs) {
      mkdirSync(run.folder, { recursive: true });
      // An empty configuration file: it configures nothing, and stops the search for one in the
      // temporary folder's parents, where someone else's memloom.config.json would take over.
      writeFileSync(join(run.folder, 'memloom.config.json'), '{}\n');
      console.log(`\n$ node configured.js   # ${run.label}`);
      const result = spawnSync(process.execPath, [script], { cwd: run.folder, env: run.env, stdio: 'inherit' });
      if (result.status !== 0) throw new Error(`configured.js failed with ${run.label} (exit ${result.status})`);
    }
    heading('What the Markdown run left on disk: users/alice/memory/MEMORY.md');
    console.log(readFileSync(join(root, 'markdown', 'memory', 'users', 'alice', 'memory', 'MEMORY.md'), 'utf8'));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
