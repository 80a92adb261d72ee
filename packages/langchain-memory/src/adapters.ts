import { Embeddings, type EmbeddingsInterface, type EmbeddingsParams } from '@langchain/core/embeddings';
import { HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import { describeValue, MemloomError, normalizeVector, toMemloomError, type Embedder, type EmbedOptions, type GenerateRequest, type LanguageModel } from '@memloom/core';
import { messageText } from './messages.js';
import { invalidOptions } from './errors.js';

export interface FromLangChainEmbeddingsOptions {
  /** Names the vector space (model and settings); a store refuses vectors from an embedder with another id. */
  id: string;
  /** Length of every vector the embeddings return. */
  dimension: number;
}

/**
 * Use a LangChain `Embeddings` (OpenAI, Cohere, Ollama, …) as memloom's
 * embedder. Queries go through `embedQuery`, documents through
 * `embedDocuments`; vectors are normalized to unit length.
 */
export function fromLangChainEmbeddings(embeddings: EmbeddingsInterface, options: FromLangChainEmbeddingsOptions): Embedder {
  if (!embeddings || typeof embeddings.embedDocuments !== 'function' || typeof embeddings.embedQuery !== 'function') {
    throw invalidOptions('fromLangChainEmbeddings needs a LangChain Embeddings (with embedDocuments and embedQuery)');
  }
  if (typeof options?.id !== 'string' || options.id.trim() === '') {
    throw invalidOptions('fromLangChainEmbeddings needs an id that names the model, e.g. { id: "openai/text-embedding-3-small" }');
  }
  if (!Number.isInteger(options.dimension) || options.dimension <= 0) {
    throw invalidOptions(`fromLangChainEmbeddings needs the vector dimension as a positive integer, got ${describeValue(options.dimension)}`);
  }
  return {
    id: options.id,
    dimension: options.dimension,
    async embed(texts: readonly string[], embedOptions?: EmbedOptions): Promise<number[][]> {
      if (texts.length === 0) return [];
      const vectors =
        embedOptions?.purpose === 'query'
          ? await Promise.all(texts.map((text) => embeddings.embedQuery(text)))
          : await embeddings.embedDocuments([...texts]);
      return vectors.map((vector) => normalizeVector(vector));
    },
  };
}

/** The part of a LangChain chat model memloom needs: `invoke(messages)` answering with a message. */
export interface ChatModelLike {
  invoke(input: BaseMessage[], options?: { signal?: AbortSignal }): Promise<BaseMessage>;
  getName?(): string;
}

/**
 * Use a LangChain chat model (`BaseChatModel`) as memloom's language model,
 * for merging, compression and summaries: the request's system text becomes a
 * SystemMessage, its prompt a HumanMessage, and the answer's text is returned.
 * `maxOutputTokens` is not passed on (providers name it differently); set it on
 * the model itself.
 */
export function fromLangChainChatModel(model: ChatModelLike, options: { id?: string } = {}): LanguageModel {
  if (!model || typeof model.invoke !== 'function') {
    throw invalidOptions('fromLangChainChatModel needs a LangChain chat model (with invoke)');
  }
  const id = options.id ?? `langchain/${model.getName?.() ?? 'chat-model'}`;
  return {
    id,
    async generate(request: GenerateRequest): Promise<string> {
      const messages: BaseMessage[] = [];
      if (request.system) messages.push(new SystemMessage(request.system));
      messages.push(new HumanMessage(request.prompt));
      try {
        const answer = await model.invoke(messages, request.signal ? { signal: request.signal } : {});
        return messageText(answer);
      } catch (error) {
        throw toMemloomError(error, { code: 'MODEL_ERROR', backend: 'langchain', message: `chat model ${id} failed` });
      }
    },
  };
}

/**
 * A LangChain chat model through {@link fromLangChainChatModel}; a memloom language model as it is.
 * (LangChain models have a `generate` too, a different one: `invoke` tells them apart.)
 */
export function toLanguageModel(model: ChatModelLike | LanguageModel): LanguageModel {
  return typeof (model as Partial<ChatModelLike>).invoke === 'function' ? fromLangChainChatModel(model as ChatModelLike) : (model as LanguageModel);
}

/**
 * A memloom embedder (the offline default, transformers.js, a test embedder)
 * as a LangChain `Embeddings`, for vector stores, retrievers or LangGraph's
 * own `InMemoryStore({ index: { embeddings, dims } })`.
 */
export class MemloomEmbeddings extends Embeddings {
  readonly embedder: Embedder;

  constructor(embedder: Embedder, params: EmbeddingsParams = {}) {
    super(params);
    if (!embedder || typeof embedder.embed !== 'function') {
      throw invalidOptions('MemloomEmbeddings needs a memloom Embedder (with embed)');
    }
    this.embedder = embedder;
  }

  /** Dimension of the vectors, e.g. for LangGraph's `index.dims`. */
  get dimension(): number {
    return this.embedder.dimension;
  }

  async embedDocuments(documents: string[]): Promise<number[][]> {
    return this.embedder.embed(documents, { purpose: 'document' });
  }

  async embedQuery(document: string): Promise<number[]> {
    const [vector] = await this.embedder.embed([document], { purpose: 'query' });
    if (!vector) {
      throw new MemloomError({ code: 'INVALID_EMBEDDING', backend: 'langchain', message: `embedder ${this.embedder.id} returned no vector for the query` });
    }
    return vector;
  }
}
