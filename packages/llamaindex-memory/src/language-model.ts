import type { ChatMessage, LLM } from '@llamaindex/core/llms';
import { extractText } from '@llamaindex/core/utils';
import { abortable, MemloomError, toMemloomError, type GenerateRequest, type LanguageModel } from '@memloom/core';

export interface FromLlamaIndexLLMOptions {
  /** Names the model in memloom's logs and errors. @default `llamaindex:<metadata.model>` */
  id?: string;
}

/**
 * Use a LlamaIndex `LLM` (OpenAI, Anthropic, Ollama, a MockLLM, …) as
 * memloom's `LanguageModel`: the system text becomes a system message, the
 * prompt a user message, and the reply's text is the answer.
 *
 * LlamaIndex's `chat` takes no abort signal, so an abort (memloom's model
 * timeout) settles the call at once and the late reply is ignored. A failed
 * or aborted call throws MODEL_ERROR, with the LLM's error as its cause.
 * `maxOutputTokens` is left to the LLM's own settings.
 */
export function fromLlamaIndexLLM(llm: LLM, options: FromLlamaIndexLLMOptions = {}): LanguageModel {
  if (typeof llm !== 'object' || llm === null || typeof (llm as Partial<LLM>).chat !== 'function') {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'llamaindex', message: 'fromLlamaIndexLLM needs a LlamaIndex LLM (an object with chat(params))' });
  }
  if (options.id !== undefined && (typeof options.id !== 'string' || options.id.trim() === '')) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'llamaindex', message: 'fromLlamaIndexLLM: id must be a non-empty string' });
  }
  const id = options.id ?? `llamaindex:${modelName(llm)}`;
  return {
    id,
    async generate(request: GenerateRequest): Promise<string> {
      const messages: ChatMessage[] = [
        ...(request.system ? [{ role: 'system' as const, content: request.system }] : []),
        { role: 'user', content: request.prompt },
      ];
      let response: unknown;
      try {
        request.signal?.throwIfAborted();
        response = await abortable(llm.chat({ messages }), request.signal);
      } catch (error) {
        throw toMemloomError(error, { code: 'MODEL_ERROR', backend: 'llamaindex', message: `${id} failed` });
      }
      const content = (response as { message?: { content?: unknown } } | undefined)?.message?.content;
      if (typeof content !== 'string' && !Array.isArray(content)) {
        throw new MemloomError({ code: 'MODEL_ERROR', backend: 'llamaindex', message: `${id} answered without message content` });
      }
      return extractText(content);
    },
  };
}

function modelName(llm: LLM): string {
  const model = (llm as { metadata?: { model?: unknown } }).metadata?.model;
  return typeof model === 'string' && model !== '' ? model : (llm.constructor?.name ?? 'llm');
}
