/**
 * defineTool: a tool whose argument and result types come from its own declaration, so they are
 * written once. The arguments' type is inferred from `args` (a zod or other Standard Schema, or a
 * JSON Schema written inline or `as const`), the result's from what `run` returns. At run time it
 * is the definition itself: the registry reads the schema (src/tools/registry.ts).
 */
import type { AnySchema, Infer } from '../schema/infer.ts';
import type { ToolDefinition, ToolRunContext } from './types.ts';

/** What defineTool takes: a ToolDefinition whose `run` is typed by its `args` schema. */
export interface ToolInput<S extends AnySchema, Result>
  extends Omit<ToolDefinition, 'args' | 'run' | '~input'> {
  /** See ToolDefinition.args: a JSON Schema or a Standard Schema with a JSON Schema form. */
  args: S;
  /** Gets the arguments after validation: a Standard Schema's output (defaults filled). */
  run(args: Infer<S>, ctx: ToolRunContext): Promise<Result>;
}

/**
 * Declares a tool (the default export of a module in `tool_modules`). `run`'s arguments are typed
 * by `args`; callers (`ctx.tools.call` with the file `organism types` writes) give the schema's
 * input type and get `run`'s result type.
 */
export function defineTool<const S extends AnySchema, Result>(
  definition: ToolInput<S, Result>,
): ToolDefinition<Infer<S>, Result, Infer<S, 'in'>> {
  return definition as unknown as ToolDefinition<Infer<S>, Result, Infer<S, 'in'>>;
}
