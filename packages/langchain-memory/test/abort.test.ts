import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { createAgent } from 'langchain';
import { axisVector, createControlledModel, vectorWithSimilarity } from '@memloom/core/testing';
import { createMemoryPipeline, MemloomError, type AfterTurnReport } from '@memloom/core';
import { describe, expect, it } from 'vitest';
import { createMemloomMiddleware, memoryAppendTool, memoryForgetTool, memorySearchTool, type MemloomMiddlewareOptions } from '../src/index.js';
import { DIM, rig } from './helpers.js';

const alice = { userId: 'alice' };

// The user's words are a near-duplicate of the stored preference (>= 0.85): an add merges, and
// with a language model the merged text is the model's.
const PREFERENCE = 'User prefers green tea in the morning';
const SAID_PREFERENCE = 'I prefer green tea in the morning.';
const vectors = { [PREFERENCE]: axisVector(DIM, 0), [SAID_PREFERENCE]: vectorWithSimilarity(DIM, 0, 1, 0.95) };

type Hook = (...args: unknown[]) => Promise<unknown>;

/** The middleware, with every run of its afterAgent hook kept, to see how the hook itself ended. */
function watchedMiddleware(memory: Parameters<typeof createMemloomMiddleware>[0], options: MemloomMiddlewareOptions) {
  const middleware = createMemloomMiddleware(memory, options);
  const hook = middleware.afterAgent as unknown as Hook;
  const runs: Promise<unknown>[] = [];
  (middleware as unknown as { afterAgent: Hook }).afterAgent = (...args) => {
    const run = hook(...args);
    runs.push(run);
    return run;
  };
  return { middleware, runs };
}

/** How a promise ended. */
function outcome(work: Promise<unknown>): Promise<{ rejected: unknown } | { resolved: unknown }> {
  return work.then(
    (resolved) => ({ resolved }),
    (rejected: unknown) => ({ rejected }),
  );
}

describe('the agent middleware with the run’s signal', () => {
  it("stops the turn's extraction model call in flight, records nothing, and throws the abort (not to onError)", async () => {
    const { memory } = rig();
    const extractor = createControlledModel();
    const failures: string[] = [];
    const { middleware, runs } = watchedMiddleware(memory, {
      model: extractor.model,
      summarize: false,
      workingMemory: false,
      onError: (error, step) => failures.push(`${step}:${error.code}`),
    });
    const agent = createAgent({ model: fakeModel().respond(new AIMessage('Lisbon, lovely.')), tools: [], middleware: [middleware] });
    const stop = new AbortController();
    const reason = new Error('the user closed the chat');

    const run = agent.invoke({ messages: [new HumanMessage('I moved to Lisbon last year.')] }, { context: alice, signal: stop.signal });
    const ended = outcome(run);
    const pending = await extractor.call(0, run);
    expect(pending.request.signal?.aborted).toBe(false);
    extractor.abortDuring(pending, stop, reason, '[ADD USER] Alice moved to Lisbon last year');

    expect('rejected' in (await ended)).toBe(true);
    // The hook ends with the run's reason: LangChain sees the abort, the memory step did not fail.
    expect(await outcome(runs[0]!)).toEqual({ rejected: reason });
    expect(pending.request.signal?.reason).toBe(reason);
    expect(failures).toEqual([]);
    expect(await memory.count({ scope: alice })).toBe(0);
  });

  it('stops the session summary model call in flight and writes no summary episode', async () => {
    const { memory } = rig();
    const writer = createControlledModel();
    const { middleware, runs } = watchedMiddleware(memory, {
      model: writer.model,
      recordTurns: false,
      workingMemory: false,
      policy: { session_summary_message_threshold: 2, session_summary_keep_count: 1 },
    });
    const agent = createAgent({ model: fakeModel().respond(new AIMessage('Noted.')), tools: [], middleware: [middleware] });
    const stop = new AbortController();
    const reason = new Error('the user closed the chat');

    // Four messages after the answer: past the threshold of 2.
    const earlier = [new HumanMessage('I am planning a trip to Oslo.'), new AIMessage('When?')];
    const run = agent.invoke({ messages: [...earlier, new HumanMessage('In March.')] }, { context: alice, signal: stop.signal });
    const ended = outcome(run);
    const pending = await writer.call(0, run);
    writer.abortDuring(pending, stop, reason, 'They planned a trip to Oslo.');

    expect('rejected' in (await ended)).toBe(true);
    expect(await outcome(runs[0]!)).toEqual({ rejected: reason });
    expect(await memory.count({ scope: alice })).toBe(0);
  });

  it("throws the abort, not to onError, when the turn's scope fails after the run was aborted", async () => {
    const { memory } = rig();
    const stop = new AbortController();
    const reason = new Error('the user closed the chat');
    const failures: string[] = [];
    let lookups = 0;
    const { middleware, runs } = watchedMiddleware(memory, {
      model: null,
      summarize: false,
      workingMemory: false,
      onError: (error, step) => failures.push(`${step}:${error.code}`),
      // The model call's lookup works; the one after the turn is cut short by the abort.
      scope: async () => {
        if (++lookups === 1) return alice;
        stop.abort(reason);
        throw new Error('the user directory went away');
      },
    });
    const agent = createAgent({ model: fakeModel().respond(new AIMessage('Lisbon, lovely.')), tools: [], middleware: [middleware] });

    await outcome(agent.invoke({ messages: [new HumanMessage('I moved to Lisbon last year.')] }, { signal: stop.signal }));
    expect(lookups).toBe(2);
    expect(await outcome(runs[0]!)).toEqual({ rejected: reason });
    expect(failures).toEqual([]);
  });

  it("throws the abort, not to onError, for a step the pipeline reports failed when the run is aborted before it is reported", async () => {
    const { memory } = rig();
    const stop = new AbortController();
    const reason = new Error('the user closed the chat');
    const pipeline = createMemoryPipeline({ memory, languageModel: null });
    const afterTurn = pipeline.afterTurn.bind(pipeline);
    // The extraction's write fails (the pipeline reports it and goes on); the run is aborted as the pipeline returns.
    memory.add = () => Promise.reject(new Error('disk full'));
    const reports: AfterTurnReport[] = [];
    pipeline.afterTurn = async (input) => {
      const report = await afterTurn(input);
      reports.push(report);
      stop.abort(reason);
      return report;
    };
    const failures: string[] = [];
    const { middleware, runs } = watchedMiddleware(memory, { pipeline, summarize: false, workingMemory: false, onError: (error, step) => failures.push(`${step}:${error.code}`) });
    const agent = createAgent({ model: fakeModel().respond(new AIMessage('Lisbon, lovely.')), tools: [], middleware: [middleware] });

    await outcome(agent.invoke({ messages: [new HumanMessage('I moved to Lisbon last year.')] }, { context: alice, signal: stop.signal }));
    expect(reports.map((report) => report.errors.map((entry) => entry.step))).toEqual([['extraction']]);
    expect(await outcome(runs[0]!)).toEqual({ rejected: reason });
    expect(failures).toEqual([]);
  });
});

describe('memory_append with the run’s signal', () => {
  it("stops the merge's model call in flight in an agent run and stores nothing", async () => {
    const merger = createControlledModel();
    const { memory } = rig(vectors, { languageModel: merger.model });
    const { memory: stored } = await memory.add(PREFERENCE, { scope: alice, category: 'fact' });
    const adds: Promise<unknown>[] = [];
    const add = memory.add.bind(memory);
    memory.add = (content, options) => {
      const added = add(content, options);
      adds.push(added);
      return added;
    };
    const model = fakeModel()
      .respondWithTools([{ name: 'memory_append', args: { content: SAID_PREFERENCE } }])
      .respond(new AIMessage('Noted.'));
    const agent = createAgent({ model, tools: [], middleware: [createMemloomMiddleware(memory, { recordTurns: false, summarize: false, workingMemory: false })] });
    const stop = new AbortController();
    const reason = new Error('the user closed the chat');

    const run = agent.invoke({ messages: [new HumanMessage(SAID_PREFERENCE)] }, { context: alice, signal: stop.signal });
    const ended = outcome(run);
    const pending = await merger.call(0, run);
    merger.abortDuring(pending, stop, reason, 'User prefers green tea every morning');

    expect('rejected' in (await ended)).toBe(true);
    expect(adds).toHaveLength(1);
    expect(await outcome(adds[0]!)).toEqual({ rejected: reason });
    expect(pending.request.signal?.reason).toBe(reason);
    const facts = await memory.list({ scope: alice });
    expect(facts.map((fact) => fact.content)).toEqual([PREFERENCE]);
    expect((await memory.history(stored.id)).map((version) => version.action)).toEqual(['create']);
  });

  it('throws an abort whose reason is a MemloomError instead of answering the model with a tool error', async () => {
    const merger = createControlledModel();
    const { memory } = rig(vectors, { languageModel: merger.model });
    await memory.add(PREFERENCE, { scope: alice, category: 'fact' });
    const stop = new AbortController();
    const reason = new MemloomError({ code: 'TIMEOUT', backend: 'app', message: 'the request ran out of time' });

    const call = memoryAppendTool(memory).invoke(
      { type: 'tool_call', id: 'call-1', name: 'memory_append', args: { content: SAID_PREFERENCE } },
      { context: alice, signal: stop.signal },
    );
    const pending = await merger.call(0, call);
    merger.abortDuring(pending, stop, reason, 'User prefers green tea every morning');

    const result = await outcome(call);
    expect(result).toEqual({ rejected: reason });
    expect('resolved' in result && ToolMessage.isInstance(result.resolved)).toBe(false);
    expect((await memory.list({ scope: alice })).map((fact) => fact.content)).toEqual([PREFERENCE]);
  });

  it('after an abort, a tool throws the abort, not an error of its own met meanwhile', async () => {
    const { memory } = rig(vectors);
    const reason = new Error('the run was cancelled');
    const call = memoryForgetTool(memory).invoke({ type: 'tool_call', id: 'call-2', name: 'memory_forget', args: { id: 'no-such-memory' } }, { context: alice, signal: AbortSignal.abort(reason) });
    expect(await outcome(call)).toEqual({ rejected: reason });
  });
});

describe('searches with the run’s signal', () => {
  /** The rig's embedder, aborting `stop` (with `reason`) inside its first query embedding, and keeping the signal it was given. */
  function abortingQueries(embedder: ReturnType<typeof rig>['embedder'], stop: AbortController, reason: unknown) {
    const given: (AbortSignal | undefined)[] = [];
    const embed = embedder.embed.bind(embedder);
    embedder.embed = async (texts, options) => {
      if (options?.purpose === 'query') {
        given.push(options.signal);
        stop.abort(reason);
        options.signal?.throwIfAborted();
      }
      return embed(texts, options);
    };
    return given;
  }

  it("stops the prompt's memory search and throws the abort (not to onError)", async () => {
    const { memory, embedder } = rig(vectors);
    await memory.add(PREFERENCE, { scope: alice, category: 'fact' });
    const stop = new AbortController();
    const reason = new Error('the user closed the chat');
    const given = abortingQueries(embedder, stop, reason);
    const failures: string[] = [];
    const middleware = createMemloomMiddleware(memory, { recordTurns: false, summarize: false, workingMemory: false, onError: (error, step) => failures.push(`${step}:${error.code}`) });
    const agent = createAgent({ model: fakeModel().respond(new AIMessage('Green tea.')), tools: [], middleware: [middleware] });

    const result = await outcome(agent.invoke({ messages: [new HumanMessage('What do I drink in the morning?')] }, { context: alice, signal: stop.signal }));
    expect('rejected' in result).toBe(true);
    expect(given).toHaveLength(1);
    expect(given[0]?.aborted).toBe(true);
    expect(failures).toEqual([]);
  });

  it('stops memory_search and throws the abort instead of answering the model', async () => {
    const { memory, embedder } = rig(vectors);
    await memory.add(PREFERENCE, { scope: alice, category: 'fact' });
    const stop = new AbortController();
    const reason = new Error('the run was cancelled');
    const given = abortingQueries(embedder, stop, reason);
    const call = memorySearchTool(memory).invoke({ type: 'tool_call', id: 'call-3', name: 'memory_search', args: { query: 'morning drink' } }, { context: alice, signal: stop.signal });
    expect(await outcome(call)).toEqual({ rejected: reason });
    expect(given[0]?.aborted).toBe(true);
  });
});
