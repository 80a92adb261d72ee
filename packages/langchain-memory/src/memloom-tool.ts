import { ToolMessage } from '@langchain/core/messages';
import { DynamicStructuredTool, type ToolRunnableConfig } from '@langchain/core/tools';
import { MemloomError } from '@memloom/core';
import type { z } from 'zod';
import { throwIfRunAborted } from './errors.js';
import type { RunInfo } from './scope.js';

/** What a memloom tool's body receives besides its arguments. */
export interface ToolCallInfo extends RunInfo {
  toolCallId: string | undefined;
  /** The run's abort signal (LangChain's `config.signal`), for memloom calls that take one. */
  signal?: AbortSignal;
}

export interface MemloomToolFields<Schema extends z.ZodObject> {
  name: string;
  description: string;
  schema: Schema;
  /** Returns the text the model reads. A MemloomError becomes a tool error; anything else, and anything after an abort, propagates. */
  run(input: z.output<Schema>, call: ToolCallInfo): Promise<string>;
}

/**
 * A structured tool whose bad input never reaches the body and never throws
 * at the model: arguments that fail the schema, and MemloomErrors from the
 * body (empty content, an id outside the user's scope, …), come back as a
 * ToolMessage with `status: "error"` and one readable sentence, so the model
 * can correct itself. Called without a tool call id (a plain `invoke(args)`),
 * the same failures throw a MemloomError instead. Once the run's signal is
 * aborted, whatever the body throws (the signal's reason) propagates, so
 * LangChain sees the abort.
 */
export class MemloomTool<Schema extends z.ZodObject = z.ZodObject> extends DynamicStructuredTool<Schema> {
  constructor(fields: MemloomToolFields<Schema>) {
    super({
      name: fields.name,
      description: fields.description,
      schema: fields.schema,
      func: async (input: unknown, _runManager: unknown, config?: ToolRunnableConfig) => {
        const call = callInfo(config);
        try {
          return await fields.run(input as z.output<Schema>, call);
        } catch (error) {
          throwIfRunAborted(call.signal, error);
          if (!MemloomError.isInstance(error)) throw error;
          // Without the `[memloom] [backend]` prefix, which means nothing to a model.
          return toolError(fields.name, call.toolCallId, error.reason, error);
        }
      },
    } as ConstructorParameters<typeof DynamicStructuredTool<Schema>>[0]);
  }

  override async call(arg: unknown, configArg?: unknown, tags?: string[]): Promise<any> {
    const config = (typeof configArg === 'object' && configArg !== null && !Array.isArray(configArg) ? configArg : {}) as ToolRunnableConfig;
    const args = isToolCall(arg) ? arg.args : arg;
    const parsed = this.schema.safeParse(args ?? {});
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => issue.message).join('; ');
      const message = `${this.name} was called with invalid arguments: ${problems}. Nothing was changed; call it again with valid arguments.`;
      const id = isToolCall(arg) ? arg.id : callInfo(config).toolCallId;
      return toolError(this.name, id, message, new MemloomError({ code: 'INVALID_INPUT', backend: 'langchain', message }));
    }
    return super.call(arg as never, configArg as never, tags);
  }
}

/** A model-readable failure: a ToolMessage when there is a tool call to answer, else the error thrown. */
function toolError(name: string, toolCallId: string | undefined, message: string, error: MemloomError): ToolMessage {
  if (!toolCallId) throw error;
  return new ToolMessage({ content: `Error: ${message}`, tool_call_id: toolCallId, name, status: 'error' });
}

function callInfo(config: ToolRunnableConfig | undefined): ToolCallInfo {
  const extended = (config ?? {}) as ToolRunnableConfig & { toolCallId?: string; context?: unknown };
  const toolCallId = extended.toolCall?.id ?? extended.toolCallId;
  return {
    toolCallId: typeof toolCallId === 'string' ? toolCallId : undefined,
    context: extended.context,
    ...(extended.configurable ? { configurable: extended.configurable } : {}),
    ...(extended.signal ? { signal: extended.signal } : {}),
  };
}

function isToolCall(value: unknown): value is { args: unknown; id?: string; name: string } {
  return typeof value === 'object' && value !== null && 'args' in value && 'name' in value && (value as { type?: string }).type === 'tool_call';
}
