/**
 * resources/list, resources/templates/list and resources/read: the project's own resources
 * (defineResource in resource_modules: fixed URIs and URI templates) and the organism's threads
 * (`organism://threads/{id}`) and listeners offered over MCP (`organism://listeners/{name}`). A URI
 * nothing offers is InvalidParams (-32602) with the URI in `data` (SEP-2164), naming the project's
 * templates of its scheme when there are any (a variable left empty matches none).
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { redactKnown } from '../../../audit/redact.ts';
import type { LoadedListener } from '../../../config/load.ts';
import type { ResourcePart, ResourceValue } from './define.ts';
import {
  checkAnswerSize,
  type FeatureDeps,
  features,
  invalidParams,
  projectError,
  runProjectCode,
} from './deps.ts';
import type { ProjectResource } from './modules.ts';

export const THREAD_TEMPLATE = 'organism://threads/{id}';
export const LISTENER_TEMPLATE = 'organism://listeners/{name}';
const LISTENER_PREFIX = 'organism://listeners/';

/** Listeners offered over MCP (mcp: true): the only ones a client is told about. */
export function offeredListeners(deps: FeatureDeps): LoadedListener[] {
  return deps.host.deps.listeners().filter((l) => l.config.mcp);
}

/** What a client may know of a listener it can call: what the tool listing says, as JSON. */
function listenerJson(listener: LoadedListener): string {
  const { name, description, agent } = listener.config;
  return JSON.stringify({
    name,
    description,
    kind: agent ? 'agent' : 'handler',
    payload: { tag: listener.tag, schema: listener.definition?.payload?.schema ?? null },
  });
}

type Contents =
  | { uri: string; mimeType: string; text: string }
  | { uri: string; mimeType: string; blob: string };

function base64(data: Uint8Array | ArrayBuffer | string): string {
  if (typeof data === 'string') return data;
  const view = data instanceof ArrayBuffer ? new Uint8Array(data) : data;
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('base64');
}

const isBytes = (v: unknown): v is Uint8Array | ArrayBuffer =>
  v instanceof Uint8Array || v instanceof ArrayBuffer;

/** What a project's read gave, as MCP contents; text parts redacted like every text leaving. */
export function toContents(
  name: string,
  uri: string,
  mimeType: string | undefined,
  value: ResourceValue,
): Contents[] {
  const part = (p: unknown, i: number): Contents => {
    if (typeof p === 'string') return { uri, mimeType: mimeType ?? 'text/plain', text: redactKnown(p) };
    if (isBytes(p)) return { uri, mimeType: mimeType ?? 'application/octet-stream', blob: base64(p) };
    if (typeof p !== 'object' || p === null)
      throw projectError(
        `resource ${name} returned ${typeof p} at [${i}]; give text, bytes or { text | blob }`,
      );
    const r = p as ResourcePart;
    const own = { uri: typeof r.uri === 'string' ? r.uri : uri };
    if ('text' in r && typeof r.text === 'string')
      return { ...own, mimeType: r.mimeType ?? mimeType ?? 'text/plain', text: redactKnown(r.text) };
    if ('blob' in r && (typeof r.blob === 'string' || isBytes(r.blob)))
      return { ...own, mimeType: r.mimeType ?? mimeType ?? 'application/octet-stream', blob: base64(r.blob) };
    throw projectError(
      `resource ${name} returned a part with neither text (a string) nor blob (bytes) at [${i}]`,
    );
  };
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) throw projectError(`resource ${name} returned no contents for ${uri}`);
  return list.map(part);
}

/** The project resource `uri` is, with the template's variables, or undefined. */
export function matchProject(
  resources: readonly ProjectResource[],
  uri: string,
): { resource: ProjectResource; params: Record<string, string> } | undefined {
  const fixed = resources.find((r) => r.definition.uri === uri);
  if (fixed) return { resource: fixed, params: {} };
  for (const resource of resources) {
    const vars = resource.template?.match(uri);
    if (!vars) continue;
    const params = Object.fromEntries(
      Object.entries(vars).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : v]),
    );
    return { resource, params };
  }
  return undefined;
}

export function registerResources(server: Server, deps: FeatureDeps): void {
  server.registerCapabilities({ resources: {} });
  // Loaded now (once per loaded config), not at the first list or read: a client that only
  // subscribes must be told of changes, and watchers start with the load.
  features(deps).catch(() => {
    // A module that does not load is the error of each request that needs it.
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const own = (await features(deps)).resources
      .filter((r) => r.definition.uri !== undefined)
      .map(({ definition: d }) => ({
        uri: d.uri as string,
        name: d.name,
        ...(d.title ? { title: d.title } : {}),
        description: d.description ?? d.name,
        ...(d.mimeType ? { mimeType: d.mimeType } : {}),
      }));
    const threads = deps.host
      .threads()
      .map((t) => ({ ...t, description: `Thread ${t.uri.slice(19)} as JSON.` }));
    return { resources: [...own, ...threads] };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: LISTENER_TEMPLATE,
        name: 'listener',
        description: 'A listener offered over MCP: its description and payload schema, as JSON.',
        mimeType: 'application/json',
      },
      {
        uriTemplate: THREAD_TEMPLATE,
        name: 'thread',
        description: 'One thread: its status and every message recorded in it, as JSON.',
        mimeType: 'application/json',
      },
      ...(await features(deps)).resources
        .filter((r) => r.template)
        .map(({ definition: d }) => ({
          uriTemplate: d.uriTemplate as string,
          name: d.name,
          ...(d.title ? { title: d.title } : {}),
          ...(d.description ? { description: d.description } : {}),
          ...(d.mimeType ? { mimeType: d.mimeType } : {}),
        })),
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    const project = await features(deps);
    const found = matchProject(project.resources, uri);
    if (found) {
      const d = found.resource.definition;
      const value = await runProjectCode(`resource ${d.name}`, () => d.read(found.params, uri));
      const contents = toContents(d.name, uri, d.mimeType, value);
      checkAnswerSize(`resource ${d.name}`, contents);
      return { contents };
    }
    if (uri.startsWith(LISTENER_PREFIX)) {
      const name = decodeURIComponent(uri.slice(LISTENER_PREFIX.length));
      const listener = offeredListeners(deps).find((l) => l.config.name === name);
      if (listener)
        return {
          contents: [{ uri, mimeType: 'application/json', text: redactKnown(listenerJson(listener)) }],
        };
      throw invalidParams(`Resource not found: no listener ${name} is offered over MCP`, { uri });
    }
    if (uri.startsWith('organism://threads/')) {
      const text = deps.host.thread(uri);
      if (text !== undefined)
        return { contents: [{ uri, mimeType: 'application/json', text: redactKnown(text) }] };
      throw invalidParams(`Resource not found: no thread ${uri.slice(19)}`, { uri });
    }
    // A near miss (a variable left empty, a part missing) is easier to fix with the templates named.
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(uri)?.[0];
    const near = project.resources
      .map((r) => r.definition.uriTemplate)
      .filter((t): t is string => t !== undefined && scheme !== undefined && t.startsWith(scheme));
    throw invalidParams(
      `Resource not found: ${uri}${near.length ? ` (no resource has that URI; templates: ${near.join(', ')}; every {variable} must be non-empty)` : ''}`,
      { uri },
    );
  });
}
