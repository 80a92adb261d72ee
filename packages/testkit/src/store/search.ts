import type { MemoryFilter } from '@memloom/core';
import { describe, expect, it } from 'vitest';
import { axis, create, record, replace, towards, version, type StoreContext } from './fixtures.js';

export function searchCases(context: StoreContext): void {
  const { options } = context;

  describe('search', () => {
    it('orders vector hits by cosine similarity, best first, with the cosine as score', async () => {
      const near = record({ content: 'near' });
      const middle = record({ content: 'middle' });
      const far = record({ content: 'far' });
      await context.store.apply([
        create(far, towards(0, 1, 0.2)),
        create(near, towards(0, 1, 0.95)),
        create(middle, towards(0, 1, 0.6)),
      ]);
      const hits = await context.store.vectorSearch({ vector: axis(0), limit: 10 });
      expect(hits.map((hit) => hit.memory.id)).toEqual([near.id, middle.id, far.id]);
      expect(hits[0]?.score).toBeCloseTo(0.95, 4);
      expect(hits[1]?.score).toBeCloseTo(0.6, 4);
      expect(hits[2]?.score).toBeCloseTo(0.2, 4);
      expect(hits[0]?.memory).toEqual(near);
    });

    it('answers an approximate vector query (a small store: as an exact one), in scope and filter, with true cosines', async () => {
      const near = record({ category: 'fact', scope: { userId: 'alice' } });
      const nearer = record({ category: 'episode', scope: { userId: 'alice' } });
      const elsewhere = record({ category: 'fact', scope: { userId: 'bob' } });
      const far = record({ category: 'fact', scope: { userId: 'alice' } });
      await context.store.apply([
        create(near, towards(0, 1, 0.8)),
        create(nearer, towards(0, 1, 0.9)),
        create(elsewhere, axis(0)),
        create(far, towards(0, 1, 0.1)),
      ]);
      const hits = await context.store.vectorSearch({
        vector: axis(0),
        limit: 5,
        scope: { userId: 'alice' },
        exactScope: true,
        filter: { category: 'fact' },
        approximate: true,
      });
      expect(hits.map((hit) => hit.memory.id)).toEqual([near.id, far.id]);
      expect(hits[0]?.score).toBeCloseTo(0.8, 4);
      expect(hits[1]?.score).toBeCloseTo(0.1, 4);
    });

    it('returns at most `limit` vector hits', async () => {
      await context.store.apply([0, 1, 2, 3, 4].map((index) => create(record(), towards(0, 1, 0.1 + index * 0.2))));
      expect(await context.store.vectorSearch({ vector: axis(0), limit: 2 })).toHaveLength(2);
    });

    it('applies every filter field', async () => {
      const coffee = record({
        category: 'fact',
        type: 'user',
        level: 'full',
        source: 'user',
        verified: true,
        tags: ['drink', 'morning'],
        metadata: { topic: 'coffee', rank: 1, pinned: true },
      });
      const meeting = record({
        category: 'episode',
        type: 'project',
        level: 'summary',
        source: 'background_ai',
        verified: false,
        tags: ['work'],
        metadata: { topic: 'meeting', rank: 2, pinned: false },
      });
      await context.store.apply([create(coffee, axis(0)), create(meeting, towards(0, 1, 0.9))]);
      const ids = async (filter: object) =>
        (await context.store.vectorSearch({ vector: axis(0), limit: 10, filter })).map((hit) => hit.memory.id);
      expect(await ids({ category: 'episode' })).toEqual([meeting.id]);
      expect(await ids({ category: ['fact', 'core'] })).toEqual([coffee.id]);
      expect(await ids({ type: 'project' })).toEqual([meeting.id]);
      expect(await ids({ level: ['summary'] })).toEqual([meeting.id]);
      expect(await ids({ source: 'user' })).toEqual([coffee.id]);
      expect(await ids({ verified: false })).toEqual([meeting.id]);
      expect(await ids({ tags: ['morning', 'nothing'] })).toEqual([coffee.id]);
      expect(await ids({ metadata: { topic: 'meeting' } })).toEqual([meeting.id]);
      expect(await ids({ metadata: { rank: 1, pinned: true } })).toEqual([coffee.id]);
      expect(await ids({ metadata: { rank: 1, pinned: false } })).toEqual([]);
      expect(await ids({ category: 'fact', type: 'project' })).toEqual([]);
      expect((await context.store.list({ filter: { tags: ['work'] } })).map((memory) => memory.id)).toEqual([meeting.id]);
      expect(await context.store.count({ filter: { verified: true } })).toBe(1);
    });

    it('scores by the true cosine in -1..1: an opposite vector scores -1, orthogonal 0, and they rank last', async () => {
      const same = record({ content: 'same direction' });
      const orthogonal = record({ content: 'orthogonal' });
      const obtuse = record({ content: 'obtuse' });
      const opposite = record({ content: 'opposite' });
      await context.store.apply([
        create(opposite, axis(0).map((value) => -value)),
        create(orthogonal, axis(1)),
        create(obtuse, towards(0, 2, -0.5)),
        create(same, axis(0)),
      ]);
      const hits = await context.store.vectorSearch({ vector: axis(0), limit: 10 });
      expect(hits.map((hit) => hit.memory.id)).toEqual([same.id, orthogonal.id, obtuse.id, opposite.id]);
      expect(hits[0]?.score).toBeCloseTo(1, 4);
      expect(hits[1]?.score).toBeCloseTo(0, 4);
      expect(hits[2]?.score).toBeCloseTo(-0.5, 4);
      expect(hits[3]?.score).toBeCloseTo(-1, 4);
      for (const hit of hits) expect(Math.abs(hit.score)).toBeLessThanOrEqual(1 + 1e-6);
      // Alone in its scope, the opposite memory is still found, with its negative score.
      await context.store.apply([replace(opposite, { scope: { userId: 'opposite-only' } })]);
      const alone = await context.store.vectorSearch({ vector: axis(0), limit: 1, scope: { userId: 'opposite-only' } });
      expect(alone.map((hit) => hit.memory.id)).toEqual([opposite.id]);
      expect(alone[0]?.score).toBeCloseTo(-1, 4);
    });

    it('applies limit after scope and filter: closer memories out of scope or filter do not crowd out the one asked for', async () => {
      const wanted = record({ content: 'crowded words, the one asked for', scope: { userId: 'alice' }, category: 'fact' });
      const crowd = [
        ...Array.from({ length: 6 }, () => record({ content: 'crowded words crowded words crowded', scope: { userId: 'bob' }, category: 'fact' })),
        ...Array.from({ length: 6 }, () => record({ content: 'crowded words crowded words crowded', scope: { userId: 'alice' }, category: 'episode' })),
        ...Array.from({ length: 6 }, () => record({ content: 'crowded words crowded words crowded', scope: { userId: 'alice', sessionId: 's1' }, category: 'fact' })),
      ];
      await context.store.apply([create(wanted, towards(0, 1, 0.3)), ...crowd.map((memory, index) => create(memory, towards(0, 1, 0.99 - index * 0.001)))]);
      const query = { scope: { userId: 'alice' }, exactScope: true, filter: { category: 'fact' as const }, limit: 1 };
      const vectorHits = await context.store.vectorSearch({ ...query, vector: axis(0) });
      expect(vectorHits.map((hit) => hit.memory.id)).toEqual([wanted.id]);
      expect(vectorHits[0]?.score).toBeCloseTo(0.3, 4);
      expect((await context.store.vectorSearch({ vector: axis(0), limit: 1, scope: { userId: 'alice' }, filter: { category: 'fact' }, exactScope: true, approximate: true })).map((hit) => hit.memory.id)).toEqual([wanted.id]);
      expect((await context.store.list({ ...query })).map((memory) => memory.id)).toEqual([wanted.id]);
      if (options.capabilities.textSearch) {
        const textHits = await context.store.textSearch!({ ...query, text: 'crowded words' });
        expect(textHits.map((hit) => hit.memory.id)).toEqual([wanted.id]);
      }
    });

    /**
     * Every query method gives `expected` for `filter`: vector search in that order (best first:
     * the memories' vectors are written nearest first), list, listPage and text search in any order
     * (text search with `text`), and count their number.
     */
    const expectFilterGives = async (filter: MemoryFilter, expected: string[], text: string, label: string): Promise<void> => {
      const sorted = [...expected].sort();
      expect((await context.store.vectorSearch({ vector: axis(0), limit: 20, filter })).map((hit) => hit.memory.id), label).toEqual(expected);
      const listed = (await context.store.list({ filter })).map((memory) => memory.id);
      expect([...listed].sort(), label).toEqual(sorted);
      expect(await context.store.count({ filter }), label).toBe(listed.length);
      if (options.capabilities.listPage) {
        expect((await context.store.listPage!({ filter, limit: 20 })).memories.map((memory) => memory.id).sort(), label).toEqual(sorted);
      }
      if (options.capabilities.textSearch) {
        expect((await context.store.textSearch!({ text, limit: 20, filter })).map((hit) => hit.memory.id).sort(), label).toEqual(sorted);
      }
    };

    it('compares metadata by strict equality: the string "1", the number 1 and true are told apart in every query', async () => {
      const values: [string, unknown][] = [
        ['string-1', '1'],
        ['number-1', 1],
        ['boolean-true', true],
        ['string-true', 'true'],
        ['number-0', 0],
        ['boolean-false', false],
        ['string-empty', ''],
        ['absent', undefined],
      ];
      const memories = values.map(([name, value]) =>
        record({ id: `meta-${name}`, content: `metadata words ${name}`, metadata: value === undefined ? { other: 1 } : { flag: value, other: 1 } }),
      );
      await context.store.apply(memories.map((memory, index) => create(memory, towards(0, 1, 0.9 - index * 0.05))));
      for (const [name, value] of values) {
        if (value === undefined) continue;
        await expectFilterGives({ metadata: { flag: value as string | number | boolean } }, [`meta-${name}`], 'metadata words', `metadata.flag === ${JSON.stringify(value)}`);
      }
      expect(await context.store.count({ filter: { metadata: { flag: 1, other: 1 } } })).toBe(1);
      expect(await context.store.count({ filter: { metadata: { flag: 1, other: '1' } } })).toBe(0);
    });

    it('applies every filter field alike in list, count, listPage, vector search and text search', async () => {
      const memories = [
        record({ id: 'f-coffee', content: 'filtered words coffee', category: 'fact', type: 'user', level: 'full', source: 'user', verified: true, tags: ['drink', 'morning'], metadata: { topic: 'coffee', rank: 1, pinned: true } }),
        record({ id: 'f-meeting', content: 'filtered words meeting', category: 'episode', type: 'project', level: 'summary', source: 'background_ai', verified: false, tags: ['work'], metadata: { topic: 'meeting', rank: 2, pinned: false } }),
        record({ id: 'f-rule', content: 'filtered words rule', category: 'system', type: 'feedback', level: 'tag', source: 'system', verified: true, tags: [], metadata: { topic: 'rule', rank: 3 } }),
        record({ id: 'f-link', content: 'filtered words link', category: 'core', type: 'reference', level: 'trace', source: 'user', verified: false, tags: ['work', 'morning'], metadata: { topic: 'link', rank: 1, pinned: true } }),
        record({ id: 'f-old', content: 'filtered words old', category: 'fact', type: 'user', level: 'archive', source: 'background_ai', verified: true, tags: ['drink'], metadata: {} }),
      ];
      await context.store.apply(memories.map((memory, index) => create(memory, towards(0, 1, 0.9 - index * 0.1))));
      const cases: [MemoryFilter, string[]][] = [
        [{ category: 'episode' }, ['f-meeting']],
        [{ category: ['fact', 'core'] }, ['f-coffee', 'f-link', 'f-old']],
        [{ category: 'system' }, ['f-rule']],
        [{ type: 'project' }, ['f-meeting']],
        [{ type: ['user', 'feedback'] }, ['f-coffee', 'f-rule', 'f-old']],
        [{ type: 'reference' }, ['f-link']],
        [{ level: 'summary' }, ['f-meeting']],
        [{ level: ['tag', 'trace', 'archive'] }, ['f-rule', 'f-link', 'f-old']],
        [{ level: 'full' }, ['f-coffee']],
        [{ source: 'user' }, ['f-coffee', 'f-link']],
        [{ source: ['system', 'background_ai'] }, ['f-meeting', 'f-rule', 'f-old']],
        [{ verified: true }, ['f-coffee', 'f-rule', 'f-old']],
        [{ verified: false }, ['f-meeting', 'f-link']],
        [{ tags: ['morning'] }, ['f-coffee', 'f-link']],
        [{ tags: ['drink', 'nothing'] }, ['f-coffee', 'f-old']],
        [{ tags: ['nothing'] }, []],
        [{ metadata: { topic: 'meeting' } }, ['f-meeting']],
        [{ metadata: { rank: 1 } }, ['f-coffee', 'f-link']],
        [{ metadata: { rank: 1, pinned: true } }, ['f-coffee', 'f-link']],
        [{ metadata: { pinned: false } }, ['f-meeting']],
        [{ metadata: { rank: 1, pinned: false } }, []],
        [{ metadata: { missing: 'x' } }, []],
        [{ category: 'fact', type: 'project' }, []],
        [{ category: ['fact', 'core'], verified: false, tags: ['morning'] }, ['f-link']],
        [{ source: 'user', level: ['full', 'trace'], metadata: { topic: 'coffee' } }, ['f-coffee']],
        [{ ids: ['f-old', 'f-meeting'] }, ['f-meeting', 'f-old']],
        [{ ids: ['f-coffee', 'f-missing'] }, ['f-coffee']],
        [{ ids: ['f-coffee', 'f-meeting'], category: 'episode' }, ['f-meeting']],
        [{ ids: [] }, []],
        [{ ids: ['f-link', 'f-coffee', 'f-link'] }, ['f-coffee', 'f-link']],
        [{ ids: [...Array.from({ length: 1000 }, (_, index) => `f-absent-${index}`), 'f-rule'] }, ['f-rule']],
        [{}, memories.map((memory) => memory.id)],
      ];
      for (const [filter, expected] of cases) await expectFilterGives(filter, expected, 'filtered words', `filter ${JSON.stringify(filter).slice(0, 200)}`);
      // The same list, changed between two queries, is read afresh.
      const ids = ['f-coffee'];
      await expectFilterGives({ ids }, ['f-coffee'], 'filtered words', 'ids before the change');
      ids[0] = 'f-old';
      ids.push('f-meeting');
      await expectFilterGives({ ids }, ['f-meeting', 'f-old'], 'filtered words', 'ids after the change');
    });

    it('ranks only the memories `ids` names, with the scores an unrestricted search gives them', async () => {
      const crowd = Array.from({ length: 8 }, (_, index) => record({ id: `crowd-${index}`, content: `harbour lights harbour ${index}` }));
      const wanted = [record({ id: 'wanted-near', content: 'harbour lights at dusk' }), record({ id: 'wanted-far', content: 'a quiet harbour' })];
      await context.store.apply([
        ...crowd.map((memory, index) => create(memory, towards(0, 1, 0.99 - index * 0.01))),
        create(wanted[0]!, towards(0, 1, 0.4)),
        create(wanted[1]!, towards(0, 1, 0.2)),
      ]);
      const ids = ['wanted-far', 'wanted-near', 'not-stored'];
      // The nearest memories of the store are not among those named: only the named ones come back, nearest first.
      const vectorHits = await context.store.vectorSearch({ vector: axis(0), limit: 2, filter: { ids } });
      expect(vectorHits.map((hit) => hit.memory.id)).toEqual(['wanted-near', 'wanted-far']);
      expect(vectorHits[0]?.score).toBeCloseTo(0.4, 4);
      expect(vectorHits[1]?.score).toBeCloseTo(0.2, 4);
      if (options.capabilities.textSearch) {
        // BM25's statistics (how rare a word is, how long texts are) are the store's, not the named memories':
        // each keeps the score it has in a search of everything, so searches over parts of a set rank alike.
        const everything = await context.store.textSearch!({ text: 'harbour lights', limit: 20 });
        const restricted = await context.store.textSearch!({ text: 'harbour lights', limit: 20, filter: { ids } });
        expect(restricted.map((hit) => hit.memory.id)).toEqual(['wanted-near', 'wanted-far']);
        for (const hit of restricted) expect(hit.score).toBeCloseTo(everything.find((other) => other.memory.id === hit.memory.id)!.score, 6);
      }
    });

    describe.skipIf(!options.capabilities.textSearch)('text', () => {
      it('ranks keyword matches first and leaves out what does not match', async () => {
        const espresso = record({ content: 'The user drinks espresso every morning before work' });
        const tea = record({ content: 'The user prefers green tea in the evening' });
        const unrelated = record({ content: 'Project deadline is March 15' });
        await context.store.apply([create(espresso, axis(0)), create(tea, axis(1)), create(unrelated, axis(2))]);
        const hits = await context.store.textSearch!({ text: 'espresso morning', limit: 10 });
        expect(hits[0]?.memory.id).toBe(espresso.id);
        expect(hits.map((hit) => hit.memory.id)).not.toContain(unrelated.id);
        expect(hits[0]?.score).toBeGreaterThan(0);
        expect(hits[0]?.memory).toEqual(espresso);
      });

      it('matches word forms the way core tokenizes them (stems)', async () => {
        const running = record({ content: 'She was running marathons last year' });
        await context.store.apply([create(running, axis(0))]);
        const hits = await context.store.textSearch!({ text: 'runs marathon', limit: 5 });
        expect(hits.map((hit) => hit.memory.id)).toEqual([running.id]);
      });

      it("matches a past form to its verb as core's keywordTerms read them (did … go finds went)", async () => {
        const camping = record({ content: 'Melanie went camping with her kids' });
        const bike = record({ content: 'I bought a red bike' });
        await context.store.apply([create(camping, axis(0)), create(bike, axis(1))]);
        expect((await context.store.textSearch!({ text: 'Where did she go?', limit: 5 })).map((hit) => hit.memory.id)).toEqual([camping.id]);
        expect((await context.store.textSearch!({ text: 'what did I buy', limit: 5 })).map((hit) => hit.memory.id)).toEqual([bike.id]);
      });

      it('finds Chinese text by Chinese words inside it', async () => {
        const coffee = record({ content: '我喜欢喝咖啡，每天早上一杯拿铁' });
        const job = record({ content: '我是一名AI工程师，在北京工作' });
        await context.store.apply([create(coffee, axis(0)), create(job, axis(1))]);
        const coffeeHits = await context.store.textSearch!({ text: '咖啡', limit: 5 });
        expect(coffeeHits.map((hit) => hit.memory.id)).toEqual([coffee.id]);
        const jobHits = await context.store.textSearch!({ text: '北京的工程师', limit: 5 });
        expect(jobHits[0]?.memory.id).toBe(job.id);
      });

      it('follows content edits: new words found, old words gone', async () => {
        const memory = record({ content: 'favourite colour is turquoise' });
        await context.store.apply([create(memory, axis(0))]);
        await context.store.apply([replace(memory, { content: 'favourite colour is vermilion' })]);
        expect(await context.store.textSearch!({ text: 'turquoise', limit: 5 })).toEqual([]);
        const hits = await context.store.textSearch!({ text: 'vermilion', limit: 5 });
        expect(hits.map((hit) => hit.memory.id)).toEqual([memory.id]);
      });

      it('finds a memory by the words of its context (keywordText), and follows context edits', async () => {
        const kayak = record({ content: 'Bought a kayak last week', context: 'Any plans for the lake this summer?' });
        const other = record({ content: 'The lake house is rented out' });
        await context.store.apply([create(kayak, axis(0)), create(other, axis(1))]);
        const hits = await context.store.textSearch!({ text: 'summer', limit: 5 });
        expect(hits.map((hit) => hit.memory.id)).toEqual([kayak.id]);
        expect(hits[0]?.memory).toEqual(kayak);
        expect((await context.store.textSearch!({ text: 'lake', limit: 5 })).map((hit) => hit.memory.id).sort()).toEqual([kayak.id, other.id].sort());
        // A new context replaces the old one's words; removing it leaves the content's alone.
        await context.store.apply([replace(kayak, { context: '夏天去湖边划船' })]);
        expect(await context.store.textSearch!({ text: 'summer', limit: 5 })).toEqual([]);
        expect((await context.store.textSearch!({ text: '划船', limit: 5 })).map((hit) => hit.memory.id)).toEqual([kayak.id]);
        const current = { ...kayak, context: '夏天去湖边划船', revision: 2 };
        const { context: _context, ...bare } = current;
        const after = { ...bare, revision: 3 };
        await context.store.apply([{ op: 'put', memory: after, expectedRevision: 2, version: version(current, after, 'edit') }]);
        expect(await context.store.get(kayak.id)).not.toHaveProperty('context');
        expect(await context.store.textSearch!({ text: '划船', limit: 5 })).toEqual([]);
        expect((await context.store.textSearch!({ text: 'kayak', limit: 5 })).map((hit) => hit.memory.id)).toEqual([kayak.id]);
      });

      it('applies filters and limit to text search', async () => {
        const fact = record({ content: 'lunch with Maria on Friday', category: 'fact' });
        const episode = record({ content: 'talked about lunch plans with Maria', category: 'episode' });
        const other = record({ content: 'lunch lunch lunch', category: 'fact' });
        await context.store.apply([create(fact, axis(0)), create(episode, axis(1)), create(other, axis(2))]);
        const hits = await context.store.textSearch!({ text: 'lunch Maria', limit: 5, filter: { category: 'episode' } });
        expect(hits.map((hit) => hit.memory.id)).toEqual([episode.id]);
        expect(await context.store.textSearch!({ text: 'lunch', limit: 2 })).toHaveLength(2);
      });

      it('treats query punctuation and operators as plain text', async () => {
        const memory = record({ content: 'the password policy says AND OR NOT are words' });
        await context.store.apply([create(memory, axis(0))]);
        for (const text of ['"policy', 'policy*', 'NOT policy', '(policy)', 'policy OR', "policy'; DROP TABLE x;--", ':', '"']) {
          const hits = await context.store.textSearch!({ text, limit: 5 });
          expect(Array.isArray(hits)).toBe(true);
        }
        const hits = await context.store.textSearch!({ text: 'policy*', limit: 5 });
        expect(hits.map((hit) => hit.memory.id)).toEqual([memory.id]);
      });
    });
  });
}
