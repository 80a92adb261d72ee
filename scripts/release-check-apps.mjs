// The two apps the release check installs our tarballs into. Each is what a
// user would write from our READMEs: createMemory() from `memloom` with no
// configuration (SQLite + the offline embedder), an agent with memory, and a
// fake model so that nothing needs a network or a key. `node dist/agent.js
// remember` runs session 1; `recall` (a second process) runs session 2.

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    outDir: 'dist',
    rootDir: 'src',
    strict: true,
    // Every .d.ts is checked, ours included: a declaration that names a package
    // we do not ship would fail here.
    skipLibCheck: false,
    types: ['node'],
  },
  include: ['src'],
};

const LANGCHAIN_AGENT = `import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { createAgent } from 'langchain';
import { createMemloomMiddleware } from '@memloom/langchain-memory';
import { createMemory, type Memory } from 'memloom';

const PREFERENCE = 'User prefers green tea in the morning';
const alice = { context: { userId: 'alice' } };

function agentWith(memory: Memory, model: ReturnType<typeof fakeModel>) {
  return createAgent({ model, tools: [], systemPrompt: 'You are a helpful assistant.', middleware: [createMemloomMiddleware(memory)] });
}

function text(message: BaseMessage | undefined): string {
  const content = message?.content;
  return typeof content === 'string' ? content : JSON.stringify(content);
}

const memory = await createMemory(); // no configuration: .memloom/memory.db and the offline embedder
try {
  if (process.argv[2] === 'remember') {
    const model = fakeModel()
      .respondWithTools([{ name: 'memory_append', args: { content: PREFERENCE } }])
      .respond(new AIMessage('Noted: green tea in the morning.'));
    const result = await agentWith(memory, model).invoke({ messages: [new HumanMessage('I prefer green tea in the morning.')] }, alice);
    const saved = result.messages.find((message) => ToolMessage.isInstance(message));
    if (saved?.status !== 'success') throw new Error('the memory_append tool did not succeed: ' + text(saved));
    const stored = await memory.list({ scope: { userId: 'alice' } });
    if (!stored.some((record) => record.content === PREFERENCE)) throw new Error('the preference is not in the store: ' + JSON.stringify(stored));
    console.log('session 1: the agent saved "' + PREFERENCE + '" through memory_append (' + memory.store.name + ' store)');
  } else {
    const model = fakeModel().respond(new AIMessage('Green tea.'));
    await agentWith(memory, model).invoke({ messages: [new HumanMessage('What do I like to drink in the morning?')] }, alice);
    const system = model.calls[0]?.messages[0];
    if (!system || !SystemMessage.isInstance(system)) throw new Error('the model got no system message');
    const prompt = text(system);
    if (!prompt.includes('<memories>') || !prompt.includes(PREFERENCE)) throw new Error('the second session did not show the model the preference:\\n' + prompt);
    console.log('session 2 (a new process): the model was shown "' + PREFERENCE + '" in its system prompt');
  }
} finally {
  await memory.close();
}
`;

const LLAMAINDEX_AGENT = `import {
  ToolCallLLM,
  type ChatMessage,
  type ChatResponse,
  type ChatResponseChunk,
  type LLMChatParamsNonStreaming,
  type LLMChatParamsStreaming,
  type LLMMetadata,
} from '@llamaindex/core/llms';
import { extractText } from '@llamaindex/core/utils';
import { agent } from '@llamaindex/workflow';
import { createMemory as createChatMemory } from 'llamaindex';
import { memloomBlock } from '@memloom/llamaindex-memory';
import { createMemory } from 'memloom';

/** A chat model that answers from what it is shown, and keeps every request. */
class ScriptedLLM extends ToolCallLLM {
  supportToolCall = true;
  metadata: LLMMetadata = { model: 'scripted', temperature: 0, topP: 1, contextWindow: 8192, tokenizer: undefined, structuredOutput: false };
  readonly requests: ChatMessage[][] = [];

  chat(params: LLMChatParamsStreaming): Promise<AsyncIterable<ChatResponseChunk>>;
  chat(params: LLMChatParamsNonStreaming): Promise<ChatResponse>;
  async chat(params: LLMChatParamsStreaming | LLMChatParamsNonStreaming): Promise<AsyncIterable<ChatResponseChunk> | ChatResponse> {
    const messages = params.messages.map((message) => ({ ...message }));
    this.requests.push(messages);
    const shown = messages.filter((message) => message.role === 'memory').map((message) => extractText(message.content)).join('\\n');
    const content = /vegetarian/.test(shown) ? 'Try Shigetsu: it serves vegetarian shojin ryori.' : 'Any restaurant will do.';
    if (params.stream) {
      return (async function* () {
        yield { delta: content, raw: null };
      })();
    }
    return { message: { role: 'assistant', content }, raw: null };
  }
}

const memory = await createMemory(); // no configuration: .memloom/memory.db and the offline embedder
const alice = { userId: 'alice' };
try {
  if (process.argv[2] === 'remember') {
    const block = memloomBlock({ memory, scope: alice });
    const chat = createChatMemory({ tokenLimit: 80, shortTermTokenLimitRatio: 0.5, memoryBlocks: [block] });
    const session = agent({ llm: new ScriptedLLM(), memory: chat, timeout: 30 });
    await session.run('I am planning a trip to Kyoto in April. I am vegetarian, so no meat or fish for me.');
    await session.run('I would also like to see the bamboo forest in Arashiyama early in the morning.');
    await block.whenIdle();
    await block.flush(chat); // record what is still in the short-term window
    const stored = (await memory.list({ scope: alice })).map((record) => record.content);
    if (!stored.some((content) => content.includes('vegetarian'))) throw new Error('nothing about being vegetarian was stored: ' + JSON.stringify(stored));
    console.log('session 1: memloom kept ' + stored.length + ' facts from the conversation (' + memory.store.name + ' store)');
  } else {
    const llm = new ScriptedLLM();
    const chat = createChatMemory({ memoryBlocks: [memloomBlock({ memory, scope: alice })] });
    const answer = await agent({ llm, memory: chat, timeout: 30 }).run('Which restaurants in Kyoto would suit me?');
    const result = String(answer.data.result);
    if (!result.includes('vegetarian')) throw new Error('the second session did not show the model what the user said before; it answered: ' + result);
    console.log('session 2 (a new process): the model was shown the vegetarian preference and answered "' + result + '"');
  }
} finally {
  await memory.close();
}
`;

/** Files of one app, by path relative to the app's folder. */
export function appFiles(name) {
  const agent = name === 'langchain' ? LANGCHAIN_AGENT : LLAMAINDEX_AGENT;
  return { 'tsconfig.json': `${JSON.stringify(TSCONFIG, null, 2)}\n`, 'src/agent.ts': agent };
}
