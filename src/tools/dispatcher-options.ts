/** What the dispatcher is given and answers with: its options, defaults, requests and availability. */

import type { AuditSink } from '../audit/log.ts';
import { schemaDefault } from '../config/schema.ts';
import type { TrustLevel } from '../config/types.ts';
import type { GuardInput, Verdict } from '../guard/types.ts';
import type { ApprovalGate } from './approval/gate.ts';
import type { RegisteredTool, ToolRegistry } from './registry.ts';
import type { ListenerGrants } from './tool-config.ts';
import type { CallRequest, GuardKind, ToolServices } from './types.ts';

export type { CallRequest };

/** The guard entry point (src/guard's checkCall); tests may pass their own. */
export type GuardCheck = (kind: GuardKind, input: GuardInput) => Verdict | Promise<Verdict>;

export interface Availability {
  tool: string;
  description: string;
  available: boolean;
  reason?: string;
  /** The tool's warning about how this listener's tool_config runs it (say, without a sandbox). */
  notice?: string;
}

/** One listener's tool_config that a tool warns about (see ToolDefinition.notice). */
export interface ToolNotice {
  listener: string;
  tool: string;
  notice: string;
}

export interface DispatcherDefaults {
  /** Run time allowed a tool unless tool_config.timeout_ms says otherwise. */
  timeoutMs: number;
  /** Largest JSON result unless tool_config.max_result_bytes says otherwise. */
  maxResultBytes: number;
  /** Trust of a listener that does not say. */
  trust: TrustLevel;
  /** The same call this many times within `loopWindow` calls of a thread is a loop. */
  loopRepeats: number;
  loopWindow: number;
  /** Threads whose recent calls are remembered for loop detection. */
  loopMaxThreads: number;
}

export function defaultDispatcherDefaults(): DispatcherDefaults {
  return {
    timeoutMs: 30_000,
    maxResultBytes: schemaDefault<number>('listeners[].tool_config.*.max_result_bytes'),
    trust: schemaDefault<TrustLevel>('listeners[].trust'),
    loopRepeats: 3,
    loopWindow: 5,
    loopMaxThreads: 10_000,
  };
}

export interface DispatcherOptions {
  registry: ToolRegistry;
  /** Listeners with their grants, tool_config and trust, as in organism.yaml. */
  listeners: readonly ListenerGrants[];
  workspace: string;
  dataDir: string;
  guard: GuardCheck;
  audit?: AuditSink;
  integrity?: { check(tool: RegisteredTool): string | null };
  revocations?: { get(tool: string): { reason: string } | undefined };
  services: ToolServices;
  /** Named in configuration errors. */
  configFile?: string;
  defaults?: Partial<DispatcherDefaults>;
  /** Clock for rate limits (tests). */
  now?: () => number;
  /** Where calls that need a person's approval wait (the daemon's, kept across reloads). Absent: such calls are denied. */
  approvals?: ApprovalGate;
  /**
   * Settles when tools may use the workspace (its size-bounded volume mounted, still under way
   * when the dispatcher is made): calls wait for it, and all fail when it rejects.
   */
  ready?: Promise<unknown>;
}
