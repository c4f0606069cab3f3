/**
 * definePrompt and defineResource: prompts and resources an organism project offers MCP clients
 * from its own code (modules named by `prompt_modules` and `resource_modules` in organism.yaml, each
 * default-exporting one definition or an array of them). Plain objects: the functions only type
 * them. Imports nothing of the SDK.
 */
import type { ContentBlock } from '../../../tools/content.ts';

/** Suggests values for an argument from what the client typed so far (`value`). */
export type Completer = (
  value: string,
  context: { arguments: Readonly<Record<string, string>> },
) => readonly string[] | Promise<readonly string[]>;

export interface PromptArgument {
  name: string;
  description?: string;
  required?: boolean;
  /** completion/complete for this argument. */
  complete?: Completer;
}

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: ContentBlock;
}

export interface PromptDefinition {
  /** Unique among the organism's prompts (an agent's prompt has its listener's name). */
  name: string;
  title?: string;
  description: string;
  arguments?: readonly PromptArgument[];
  /**
   * The messages, from the arguments (checked first: every required one given, no unknown one).
   * A string is one user message of text.
   */
  get(args: Readonly<Record<string, string>>): string | PromptMessage[] | Promise<string | PromptMessage[]>;
}

export function definePrompt(definition: PromptDefinition): PromptDefinition {
  return definition;
}

type Bytes = Uint8Array | ArrayBuffer;

/** One piece of a resource as read: text, or bytes (a blob); `uri` defaults to the one read. */
export type ResourcePart = { uri?: string; mimeType?: string } & (
  | { text: string }
  | { blob: Bytes | string }
);

/** What `read` gives: text, bytes, or parts. */
export type ResourceValue = string | Bytes | ResourcePart | readonly ResourcePart[];

interface ResourceCommon {
  name: string;
  title?: string;
  description?: string;
  /** Of what `read` returns, unless a part says otherwise. */
  mimeType?: string;
  /**
   * Called once when the organism loads the module, with a function to call whenever the resource
   * changes (clients that subscribed to its URI are told). May return a function that stops
   * watching; it runs when the organism reloads or stops.
   */
  watch?(changed: (uri?: string) => void): undefined | (() => void);
}

export interface StaticResource extends ResourceCommon {
  uri: string;
  uriTemplate?: undefined;
  read(params: Readonly<Record<string, string>>, uri: string): ResourceValue | Promise<ResourceValue>;
}

export interface TemplateResource extends ResourceCommon {
  /** An RFC 6570 template, `test://items/{id}`: every URI it matches is this resource. */
  uriTemplate: string;
  uri?: undefined;
  /** Gets the template's variables from the URI read. */
  read(params: Readonly<Record<string, string>>, uri: string): ResourceValue | Promise<ResourceValue>;
  /** completion/complete per template variable. */
  complete?: Readonly<Record<string, Completer>>;
}

export type ResourceDefinition = StaticResource | TemplateResource;

export function defineResource<R extends ResourceDefinition>(definition: R): R {
  return definition;
}
