/** Small tools and a dispatcher factory for the runtime tests. Everything here is real code, no mocks of the runtime. */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditEntry } from '../../../src/audit/record.ts';
import type { Verdict } from '../../../src/guard/types.ts';
import { testConfig } from '../../../src/testing/index.ts';
import { Dispatcher, type DispatcherOptions, type GuardCheck } from '../../../src/tools/dispatcher.ts';
import { ToolRegistry } from '../../../src/tools/registry.ts';
import { createToolServices } from '../../../src/tools/services.ts';
import type { ListenerGrants } from '../../../src/tools/tool-config.ts';
import type { ToolDefinition, ToolRunContext } from '../../../src/tools/types.ts';

export const EMPTY_ARGS = { type: 'object', properties: {}, additionalProperties: false } as const;

export function tempDir(prefix = 'organism-tools-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** A tool whose every run is counted, so tests can assert that a refused call did not run. */
export function counted<T extends ToolDefinition>(
  tool: T,
): T & { runs: Array<{ args: unknown; ctx: ToolRunContext }> } {
  const runs: Array<{ args: unknown; ctx: ToolRunContext }> = [];
  const inner = tool.run;
  return Object.assign(tool, {
    runs,
    run: async (args: unknown, ctx: ToolRunContext) => {
      runs.push({ args, ctx });
      return inner(args, ctx);
    },
  });
}

export function noopTool(name = 'noop') {
  return counted({
    name,
    description: 'Does nothing and answers {ok: true}; for tests.',
    args: EMPTY_ARGS,
    readOnly: true,
    capability: 'read',
    source: 'native',
    run: async () => ({ ok: true }),
  } satisfies ToolDefinition);
}

export function echoTool() {
  return counted({
    name: 'echo',
    description: 'Answers with the arguments it was given; for tests.',
    args: {
      type: 'object',
      properties: {
        text: { type: 'string', description: 'Text to echo.' },
        times: { type: 'integer', minimum: 1, default: 1 },
        api_key: { type: 'string' },
      },
      required: ['text'],
      additionalProperties: false,
    },
    readOnly: true,
    capability: 'read',
    source: 'native',
    config: {
      type: 'object',
      properties: { allowed_paths: { type: 'array', items: { type: 'string' } } },
    },
    run: async (args: { text: string; times: number }) => ({ text: args.text.repeat(args.times) }),
  } satisfies ToolDefinition);
}

/** Runs until aborted; records whether its signal fired. */
export function slowTool() {
  const state = { aborted: false };
  const tool = counted({
    name: 'slow',
    description: 'Waits ten seconds unless aborted; for timeout tests.',
    args: EMPTY_ARGS,
    readOnly: true,
    capability: 'read',
    source: 'native',
    run: (_args: unknown, ctx: ToolRunContext) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve('finished'), 10_000);
        ctx.signal.addEventListener('abort', () => {
          state.aborted = true;
          clearTimeout(timer);
          reject(ctx.signal.reason);
        });
      }),
  } satisfies ToolDefinition);
  return Object.assign(tool, { state });
}

/**
 * Returns a string of `size` bytes of JSON whose cut point for a limit of `limit` bytes falls in
 * the middle of a 4-byte character (an emoji), so a byte-wise cut would split it.
 */
export function bigTool(size = 1024 * 1024, limit = 102_400) {
  return counted({
    name: 'big',
    description: 'Answers with about a megabyte of text with emoji; for result-cap tests.',
    args: EMPTY_ARGS,
    readOnly: true,
    capability: 'read',
    source: 'native',
    run: async () => bigString(size, limit),
  } satisfies ToolDefinition);
}

export function bigString(size: number, limit: number): string {
  // JSON adds 2 quote bytes; the marker is about 60 bytes; put 4-byte chars all around the cut.
  const head = 'a'.repeat(Math.max(0, limit - 200));
  const emoji = '\u{1F600}'.repeat(100); // 400 bytes spanning the cut
  const tail = 'é'.repeat(Math.floor((size - head.length - 400) / 2));
  return head + emoji + tail;
}

export function throwingTool() {
  return counted({
    name: 'thrower',
    description: 'Always throws an error (mentioning a token); for tests.',
    args: EMPTY_ARGS,
    readOnly: true,
    capability: 'read',
    source: 'native',
    run: async () => {
      throw new Error('backend said no; token sk-test0123456789abcdefABCDEF was rejected');
    },
  } satisfies ToolDefinition);
}

export function shellTool() {
  return counted({
    name: 'shellish',
    description: 'Pretends to run a shell command; judged by the shell guard; for tests.',
    args: {
      type: 'object',
      properties: { command: { type: 'string' } },
      required: ['command'],
      additionalProperties: false,
    },
    readOnly: false,
    capability: 'exec_shell',
    source: 'native',
    guard: 'shell',
    run: async (args: { command: string }) => ({ ran: args.command }),
  } satisfies ToolDefinition);
}

export function webTool() {
  return counted({
    name: 'webby',
    description: 'Pretends to fetch a URL; needs fetch_web; for scope tests.',
    args: EMPTY_ARGS,
    readOnly: true,
    capability: 'fetch_web',
    source: 'native',
    run: async () => ({ fetched: true }),
  } satisfies ToolDefinition);
}

export function offlineTool() {
  return counted({
    name: 'offline',
    description: 'Never available: says there is no service; for tests.',
    args: {
      type: 'object',
      properties: { n: { type: 'integer' } },
      required: ['n'],
      additionalProperties: false,
    },
    readOnly: true,
    capability: 'read',
    source: 'native',
    unavailable: () => 'no smtp section in organism.yaml',
    run: async () => 'never',
  } satisfies ToolDefinition);
}

/** A guard that answers from a table by command text; records every call it judged. */
export function tableGuard(table: Record<string, Verdict> = {}) {
  const calls: Array<{ kind: string; args: unknown; trust: string }> = [];
  const guard: GuardCheck = (kind, input) => {
    calls.push({ kind, args: input.args, trust: input.trust });
    const command = String((input.args as { command?: unknown }).command ?? '');
    return table[command] ?? { verdict: 'allow', rule_id: null, reason: null, suggestion: null };
  };
  return Object.assign(guard, { calls });
}

/** An audit sink that keeps entries in memory. */
export function memoryAudit() {
  const entries: AuditEntry[] = [];
  return {
    entries,
    append: (entry: AuditEntry) => {
      entries.push(entry);
    },
    flush: async () => {},
    close: async () => {},
  };
}

export function makeDispatcher(
  tools: ToolDefinition[],
  listeners: ListenerGrants[],
  extra: Partial<DispatcherOptions> = {},
): Dispatcher {
  const registry = new ToolRegistry();
  for (const tool of tools) registry.register(tool);
  return new Dispatcher({
    registry,
    listeners,
    workspace: '/tmp',
    dataDir: '/tmp',
    guard: tableGuard(),
    // A fresh data dir (created on first use): the effect log of side-effecting tools lives there.
    services: createToolServices(testConfig()).services,
    ...extra,
  });
}
