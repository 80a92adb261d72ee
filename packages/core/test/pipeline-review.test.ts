import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHangingModel, createScriptedModel } from '../src/testing/index.js';
import { DAY, errorOf, pipelineRig, promptOf } from './pipeline-rig.js';

const alice = { userId: 'alice' };

describe('review: promotion (importance reached 2.5)', () => {
  it('PROMOTE makes the fact core, as a review version', async () => {
    const model = createScriptedModel("It is the user's birthday, a lasting fact.\n[PROMOTE]");
    const { pipeline, memory } = pipelineRig({ languageModel: model });
    const birthday = await memory.add("The user's birthday is 12 May", { scope: alice, importance: 2.5 });
    await memory.add('The user celebrates with a cake', { scope: alice });
    const report = await pipeline.review({ scope: alice });
    expect(report.reviewed).toEqual([
      expect.objectContaining({ id: birthday.memory.id, kind: 'promotion', decision: 'promote', source: 'model', rounds: 1, searches: [] }),
    ]);
    const promoted = await memory.get(birthday.memory.id);
    expect(promoted?.category).toBe('core');
    const last = (await memory.history(birthday.memory.id)).at(-1);
    expect(last).toMatchObject({ trigger: 'review', action: 'promote' });
    expect(last?.reason).toContain('[PROMOTE]');
    expect(promptOf(model)).toContain('importance has reached 2.5');
    expect(promptOf(model)).toContain('Related memories:\n[');
    expect(promptOf(model)).toContain('The user celebrates with a cake');
  });

  it('KEEP leaves it a fact and records the decision, so it is asked again only once its importance grows', async () => {
    const model = createScriptedModel('Just a busy week, not a lasting fact. [KEEP]');
    const { pipeline, memory } = pipelineRig({ languageModel: model });
    const busy = await memory.add('The user is busy with a move this week', { scope: alice, importance: 2.6 });
    const first = await pipeline.review({ scope: alice });
    expect(first.reviewed[0]).toMatchObject({ decision: 'keep', after: expect.objectContaining({ category: 'fact' }) });
    expect((await memory.get(busy.memory.id))?.metadata.promotionReview).toMatchObject({ decision: 'keep', importance: 2.6 });
    expect((await pipeline.review({ scope: alice })).reviewed).toEqual([]);
    expect((await pipeline.review({ scope: alice, ids: [busy.memory.id] })).skipped[0]?.reason).toMatch(/not due/);
    await memory.update(busy.memory.id, { importance: 2.9 });
    expect((await pipeline.review({ scope: alice })).reviewed).toHaveLength(1);
    expect(model.requests).toHaveLength(2);
  });

  it('DELETE deletes it', async () => {
    const { pipeline, memory } = pipelineRig({ languageModel: createScriptedModel('This was a misunderstanding. [DELETE]') });
    const wrong = await memory.add('The user hates music', { scope: alice, importance: 3 });
    await memory.update(wrong.memory.id, { importance: 2.5 });
    const report = await pipeline.review({ scope: alice, ids: [wrong.memory.id] });
    expect(report.reviewed[0]?.decision).toBe('delete');
    expect(await memory.get(wrong.memory.id)).toBeUndefined();
  });

  it('searches related memories on [SEARCH: …] and decides in a later round', async () => {
    const model = createScriptedModel(['Let me check. [SEARCH: birthday party]', 'Confirmed by the party plans. [PROMOTE]']);
    const { pipeline, memory } = pipelineRig({ languageModel: model });
    const birthday = await memory.add("The user's birthday is 12 May", { scope: alice, importance: 2.5 });
    await memory.add('The user plans a birthday party every May', { scope: alice });
    await memory.add('Bob plans a birthday party too', { scope: { userId: 'bob' } });
    const [outcome] = (await pipeline.review({ scope: alice })).reviewed;
    expect(outcome).toMatchObject({ decision: 'promote', rounds: 2, searches: ['birthday party'] });
    const second = promptOf(model, 1);
    expect(second).toContain('Your answer 1:\nLet me check. [SEARCH: birthday party]');
    expect(second).toContain('Search results for "birthday party":');
    expect(second).toContain('The user plans a birthday party every May');
    expect(second).not.toContain('Bob plans');
    expect(second).toContain('1 search left');
  });

  it('gives up after three rounds of searching: nothing changes', async () => {
    const model = createScriptedModel('[SEARCH: more]');
    const { pipeline, memory } = pipelineRig({ languageModel: model });
    const fact = await memory.add('The user likes chess', { scope: alice, importance: 2.5 });
    const [outcome] = (await pipeline.review({ scope: alice })).reviewed;
    expect(outcome).toMatchObject({ decision: 'none', source: 'fallback', rounds: 3, searches: ['more', 'more'] });
    expect(outcome?.modelFallback).toBe('still searching after 3 rounds');
    expect(promptOf(model, 2)).toContain('No searches are left');
    expect((await memory.get(fact.memory.id))?.category).toBe('fact');
  });
});

describe('review: decay (importance fell below 0.5)', () => {
  it('KEEP resets the importance to 0.5 and survives the next maintenance pass', async () => {
    const { pipeline, memory, clock } = pipelineRig({ languageModel: createScriptedModel('Still the user\'s hometown. [KEEP]') });
    const hometown = await memory.add('The user grew up in Porto', { scope: alice, importance: 0.52 });
    clock.advance(8 * DAY);
    await memory.maintain();
    expect((await memory.get(hometown.memory.id))?.importance).toBeCloseTo(0.494, 6);
    const [outcome] = (await pipeline.review({ scope: alice })).reviewed;
    expect(outcome).toMatchObject({ kind: 'decay', decision: 'keep' });
    const kept = await memory.get(hometown.memory.id);
    expect(kept?.importance).toBe(0.5);
    expect((await memory.history(hometown.memory.id)).at(-1)).toMatchObject({ trigger: 'review', action: 'review' });
    await memory.maintain();
    expect((await memory.get(hometown.memory.id))?.importance).toBe(0.5);
  });

  it('is due only below 0.5: a fact at exactly 0.5 is skipped as not due, one at 0.499 is reviewed (P-X03/X08)', async () => {
    const { pipeline, memory } = pipelineRig();
    const atThreshold = await memory.add('The user grew up in Porto', { scope: alice, importance: 0.5 });
    const below = await memory.add('The user once visited Oslo', { scope: alice, importance: 0.499 });
    const report = await pipeline.review({ scope: alice, ids: [atThreshold.memory.id, below.memory.id] });
    expect(report.skipped).toEqual([expect.objectContaining({ reason: 'not due (fact, importance 0.5)' })]);
    expect(report.reviewed).toEqual([expect.objectContaining({ id: below.memory.id, kind: 'decay' })]);
  });

  it('DELETE deletes it', async () => {
    const { pipeline, memory } = pipelineRig({ languageModel: createScriptedModel('Replaced by newer plans. [DELETE]') });
    const stale = await memory.add('The user plans a trip to Rome in 2019', { scope: alice, importance: 0.4 });
    expect((await pipeline.review({ scope: alice })).reviewed[0]?.decision).toBe('delete');
    expect(await memory.get(stale.memory.id)).toBeUndefined();
  });

  it('keeps a memory that changed while the model was deciding: a DELETE of what it read decides nothing', async () => {
    let restate: () => Promise<unknown> = async () => undefined;
    const { pipeline, memory } = pipelineRig({
      languageModel: createScriptedModel(async () => {
        await restate(); // the user restates the plan while the review runs
        return 'Replaced by newer plans. [DELETE]';
      }),
    });
    const plan = await memory.add('The user plans a trip to Rome in May', { scope: alice, importance: 0.4 });
    restate = () => memory.update(plan.memory.id, { content: 'The user plans a trip to Rome in May, booked today', importance: 2 });
    const report = await pipeline.review({ scope: alice });
    expect(report.reviewed[0]).toMatchObject({ decision: 'none', reason: expect.stringContaining('changed during the review (CONFLICT)') });
    expect((await memory.get(plan.memory.id))?.content).toBe('The user plans a trip to Rome in May, booked today');
  });

  it('refuses PROMOTE, which is not a decay decision', async () => {
    const { pipeline, memory } = pipelineRig({ languageModel: createScriptedModel('[PROMOTE]') });
    const stale = await memory.add('The user once tried sushi', { scope: alice, importance: 0.4 });
    const [outcome] = (await pipeline.review({ scope: alice })).reviewed;
    expect(outcome).toMatchObject({ decision: 'none', source: 'fallback' });
    expect(outcome?.modelFallback).toMatch(/\[PROMOTE\] is not a decision of this review/);
    expect(await memory.get(stale.memory.id)).toMatchObject({ category: 'fact', importance: 0.4 });
  });
});

describe('review: malformed answers, failures and no model', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    ['garbage', createScriptedModel('Hmm, hard to say.'), /no decision and no \[SEARCH/],
    ['two decisions without a final one', createScriptedModel('[KEEP] or [DELETE]? Both are fine, really.'), /weighs \[KEEP\] and \[DELETE\]/],
    ['an empty search', createScriptedModel('[SEARCH:   ]'), /empty \[SEARCH:\] query/],
    ['a thrown error', createScriptedModel(new Error('quota exceeded')), /quota exceeded/],
  ])('changes nothing when the model answers with %s', async (_, model, reason) => {
    const { pipeline, memory, warnings } = pipelineRig({ languageModel: model });
    const fact = await memory.add('The user likes chess', { scope: alice, importance: 2.5 });
    const [outcome] = (await pipeline.review({ scope: alice })).reviewed;
    expect(outcome).toMatchObject({ decision: 'none', source: 'fallback' });
    expect(outcome?.modelFallback).toMatch(reason);
    expect(await memory.history(fact.memory.id)).toHaveLength(1);
    expect(warnings.some((warning) => warning.message === 'review: no usable decision')).toBe(true);
  });

  it('takes the decision on the last line when the answer weighs several', async () => {
    const { pipeline, memory } = pipelineRig({ languageModel: createScriptedModel('Could be [KEEP], but it is plainly wrong.\n[DELETE]') });
    const fact = await memory.add('The user lives on the moon', { scope: alice, importance: 0.4 });
    expect((await pipeline.review({ scope: alice })).reviewed[0]?.decision).toBe('delete');
    expect(await memory.get(fact.memory.id)).toBeUndefined();
  });

  it('changes nothing when the model times out (fake timers)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { pipeline, memory } = pipelineRig({ languageModel: createHangingModel(), modelTimeoutMs: 1_000 });
    await memory.add('The user likes chess', { scope: alice, importance: 2.5 });
    const pending = pipeline.review({ scope: alice });
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await pending).reviewed[0]?.modelFallback).toMatch(/did not answer within 1000 ms/);
  });

  it('without a model: no promotion, and a decaying fact is left to the decay rules', async () => {
    const { pipeline, memory } = pipelineRig();
    const high = await memory.add('The user likes chess', { scope: alice, importance: 2.5 });
    const low = await memory.add('The user once visited Oslo', { scope: alice, importance: 0.4 });
    const report = await pipeline.review({ scope: alice });
    expect(report.reviewed.map((outcome) => [outcome.kind, outcome.decision, outcome.reason])).toEqual(
      expect.arrayContaining([
        ['promotion', 'none', 'no language model: not promoted'],
        ['decay', 'none', 'no language model: left to the decay rules'],
      ]),
    );
    expect(await memory.get(high.memory.id)).toMatchObject({ category: 'fact', importance: 2.5 });
    expect(await memory.get(low.memory.id)).toMatchObject({ importance: 0.4 });
  });
});

describe('review: what is reviewed', () => {
  it('scans only due facts in scope, and skips ids that are unknown, foreign or not due', async () => {
    const model = createScriptedModel('[KEEP]');
    const { pipeline, memory } = pipelineRig({ languageModel: model, maxReviewsPerCall: 1 });
    const due = await memory.add('The user likes chess', { scope: alice, importance: 2.5 });
    const alsoDue = await memory.add('The user likes go', { scope: alice, importance: 0.2 });
    const normal = await memory.add('The user likes tea', { scope: alice });
    const core = await memory.add('The user is Alice', { scope: alice, category: 'core', importance: 5 });
    const bobs = await memory.add('The user likes poker', { scope: { userId: 'bob' }, importance: 2.5 });
    const scan = await pipeline.review({ scope: alice });
    expect(scan.reviewed.map((outcome) => outcome.id)).toHaveLength(1);
    expect(scan.skipped[0]?.reason).toBe('over the limit of 1 reviews per call');
    expect([due.memory.id, alsoDue.memory.id]).toContain(scan.reviewed[0]?.id);

    const byIds = await pipeline.review({ scope: alice, ids: [normal.memory.id, core.memory.id, bobs.memory.id, 'nope'] });
    expect(byIds.reviewed).toEqual([]);
    expect(byIds.skipped.map((entry) => entry.reason)).toEqual([
      'not due (fact, importance 1)',
      'not due (core, importance 5)',
      'not found in this scope',
      'not found in this scope',
    ]);
    expect((await memory.get(bobs.memory.id))?.metadata).toEqual({});
  });

  it('rejects a bad scope', async () => {
    const { pipeline } = pipelineRig();
    expect((await errorOf(pipeline.review({ scope: { userId: '' } }))).code).toBe('INVALID_SCOPE');
  });
});
