import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeEvidence, evidenceReport, loadLocomo, runLocomo, scoredQuestions } from '../src/locomo.js';
import { createPlainBm25Retriever } from '../src/peers/plain-bm25.js';

// One conversation whose evidence is written every way the LoCoMo files write it: "D1: 3", "D1:03",
// "D:2:2", two ids in one string, an id given twice, a turn that does not exist, a bare "D", none at all.
const folder = fileURLToPath(new URL('./fixtures/locomo-evidence', import.meta.url));

describe('LoCoMo evidence ids', () => {
  it('reads each id as D<session>:<turn> of a turn the conversation has, once per question', async () => {
    const [conversation] = await loadLocomo(folder);
    expect(conversation!.questions.map((question) => question.evidence)).toEqual([
      ['D1:3'], // "D1: 3"
      ['D1:3'], // "D1:03"
      ['D1:1'], // "D1:1" and "D1: 1"
      ['D1:2'], // D9:9 names no turn
      ['D2:1', 'D2:2'], // "D2:1; D2:2"
      ['D2:2'], // "D:2:2"
      [], // "D"
      [],
      [], // adversarial: D7:1 names no turn either
    ]);
  });

  it('scores only the questions of categories 1-4 left with evidence', async () => {
    const [conversation] = await loadLocomo(folder);
    expect(scoredQuestions(conversation!).map((question) => question.question)).toHaveLength(6);
    // Bob's marathon question is scored on the turn that exists: found, not half found.
    const run = await runLocomo([conversation!], () => createPlainBm25Retriever(), [10]);
    expect(run.questions).toBe(6);
    expect(run.overall[10]).toBe(1);
  });

  it('counts what it normalised, dropped and excluded, for the scored categories only', async () => {
    const conversations = await loadLocomo(folder);
    const report = evidenceReport(conversations);
    expect(report).toEqual({
      questions: 8,
      withoutEvidence: 2,
      entries: 9,
      normalised: 5,
      dropped: 2,
      repeated: 1,
      changes: [
        'conv-e qa 0: "D1: 3" -> D1:3',
        'conv-e qa 1: "D1:03" -> D1:3',
        'conv-e qa 2: "D1: 1" -> D1:1',
        'conv-e qa 2: D1:1 repeated',
        'conv-e qa 3: D9:9 dropped (no such turn)',
        'conv-e qa 4: "D2:1; D2:2" -> D2:1, D2:2',
        'conv-e qa 5: "D:2:2" -> D2:2',
        'conv-e qa 6: "D" dropped (no turn id)',
      ],
    });
    // Two conversations add up.
    expect(evidenceReport([...conversations, ...conversations]).dropped).toBe(4);
    expect(describeEvidence(report)).toMatch(/^evidence \(the same for every row\): 6 of 8 questions of categories 1-4 scored, 2 without evidence excluded; of 9 evidence entries, 5 normalised, 2 dropped \(naming no turn\), 1 repeated: conv-e qa 0/);
  });
});
