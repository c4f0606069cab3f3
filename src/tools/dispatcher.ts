/**
 * Every tool call passes here, in one order (ARCHITECTURE.md invariant 4):
 *   exists -> granted -> not revoked -> integrity -> available -> arguments valid -> within the
 *   thread's capability scope -> guard verdict -> approval (when tool_config asks) -> once (see
 *   #once) -> rate limit -> loop -> run with timeout -> cap -> audit.
 * Each refusal is a ToolResult the caller can read and act on; nothing here throws at a caller.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { CallRecord } from '../audit/record.ts';
import { redact, redactString } from '../audit/redact.ts';
import { type Verdict, withSuggestion } from '../guard/types.ts';
import { stateThreatRecord } from '../state/store.ts';
import { approvalStep } from './approval/step.ts';
import { copyJsonArgs } from './args-copy.ts';
import { canonicalJson } from './canonical.ts';
import { checkContent, isToolContent } from './content.ts';
import {
  type Availability,
  type CallRequest,
  type DispatcherDefaults,
  type DispatcherOptions,
  defaultDispatcherDefaults,
  type ToolNotice,
} from './dispatcher-options.ts';
import type { ToolFailureCode } from './failure-codes.ts';
import { LoopDetector, RateLimiter } from './limits.ts';
import { effectLogFor } from './once.ts';
import type { RegisteredTool, ToolRegistry } from './registry.ts';
import { capResult } from './result-cap.ts';
import { type Refusal, runTool } from './run-tool.ts';
import { formatArgErrors } from './schema.ts';
import { type SharedRevocations, sharedRateLimiter, sharedRevocations, sharesState } from './shared-state.ts';
import { checkStandardArgs } from './standard-args.ts';
import {
  didYouMean,
  type ResolvedListener,
  type ResolvedToolConfig,
  resolveListeners,
} from './tool-config.ts';
import type { ToolConfig, ToolFailure, ToolResult } from './types.ts';

export {
  type Availability,
  type CallRequest,
  type DispatcherDefaults,
  type DispatcherOptions,
  defaultDispatcherDefaults,
  type GuardCheck,
  type ToolNotice,
} from './dispatcher-options.ts';

function refuse(code: ToolFailureCode, message: string, extra: Partial<ToolFailure> = {}): Refusal {
  return { status: 'refused', code, message, ...extra };
}

/** A refusal as the caller reads it. (Module level: a closure per call showed in bench mcp.) */
function failed(tool: string, refusal: Refusal): ToolResult {
  const { status, ...error } = refusal;
  return { status, tool, error };
}

let isoMs = Number.NaN;
let isoText = '';
/** The time as ISO text, formatted once per millisecond: calls come faster than that. */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

/** Tool plus canonical arguments; long ones hashed so remembered calls stay small (think write_file content). */
function loopKey(tool: string, args: unknown): string {
  const json = canonicalJson(args);
  return json.length <= 256
    ? `${tool}\u0000${json}`
    : `${tool}\u0000#${createHash('sha256').update(json).digest('base64')}`;
}

export class Dispatcher {
  readonly #registry: ToolRegistry;
  readonly #listeners: Map<string, ResolvedListener>;
  readonly #options: DispatcherOptions;
  readonly #defaults: DispatcherDefaults;
  readonly #limiter: RateLimiter;
  readonly #loops: LoopDetector;
  /** With the redis transport: revocations shared by every daemon (read from Redis every 2 s). */
  #sharedRevocations: SharedRevocations | undefined;
  /** The workspace's volume still being mounted (options.ready); undefined once it is. */
  #pending: Promise<unknown> | undefined;

  /** Throws ConfigError naming every bad grant or tool_config key. */
  constructor(options: DispatcherOptions) {
    this.#options = options;
    this.#registry = options.registry;
    this.#defaults = { ...defaultDispatcherDefaults(), ...options.defaults };
    this.#listeners = resolveListeners(
      options.listeners,
      options.registry,
      this.#defaults,
      options.configFile ?? 'organism.yaml',
    );
    this.#limiter = new RateLimiter(options.now);
    this.#loops = new LoopDetector({
      repeats: this.#defaults.loopRepeats,
      window: this.#defaults.loopWindow,
      maxThreads: this.#defaults.loopMaxThreads,
    });
    if (options.ready) {
      const pending = options.ready;
      this.#pending = pending;
      pending.then(
        () => {
          if (this.#pending === pending) this.#pending = undefined;
        },
        () => {}, // kept: every call fails with why
      );
    }
    if (sharesState(options.services.config)) {
      sharedRevocations(options.services).then(
        (shared) => {
          this.#sharedRevocations = shared;
        },
        () => {}, // Redis down at start: the file's revocations still apply; a later reload retries
      );
    }
  }

  /** The revocation in force: this machine's file, else the organism's shared one (redis transport). */
  #revoked(tool: string): { reason: string } | undefined {
    return this.#options.revocations?.get(tool) ?? this.#sharedRevocations?.get(tool);
  }

  /** Whether each tool, in registration order, can be used by the listener, and if not why. */
  availability(listener: string): Availability[] {
    const resolved = this.#listeners.get(listener);
    return this.#registry.list().map((tool) => {
      const { name, description } = tool.definition;
      const config = resolved?.tools.get(name)?.config;
      const reason = !config ? `not granted to ${listener}` : this.#blocked(tool, config);
      const notice = config ? this.#notice(tool, config) : null;
      return {
        tool: name,
        description,
        available: reason === null,
        ...(reason === null ? {} : { reason }),
        ...(notice === null ? {} : { notice }),
      };
    });
  }

  /** Every listener's tool_config that its tool warns about, in config order. */
  notices(): ToolNotice[] {
    const out: ToolNotice[] = [];
    for (const [listener, resolved] of this.#listeners) {
      for (const [name, settings] of resolved.tools) {
        const tool = this.#registry.get(name);
        const notice = tool ? this.#notice(tool, settings.config) : null;
        if (notice !== null) out.push({ listener, tool: name, notice });
      }
    }
    return out;
  }

  #notice(tool: RegisteredTool, config: ToolConfig): string | null {
    try {
      return tool.definition.notice?.(config) ?? null;
    } catch (error) {
      return `its notice check failed: ${(error as Error).message}`;
    }
  }

  /** Revoked, failing integrity or unavailable: the reason, or null. */
  #blocked(tool: RegisteredTool, config?: ToolConfig): string | null {
    const revoked = this.#revoked(tool.definition.name);
    if (revoked) return `revoked: ${revoked.reason}`;
    const integrity = this.#options.integrity?.check(tool);
    if (integrity) return `integrity failure: ${integrity}`;
    return this.#unavailable(tool, config);
  }

  #unavailable(tool: RegisteredTool, config?: ToolConfig): string | null {
    if (!tool.definition.unavailable) return null;
    try {
      return tool.definition.unavailable(this.#options.services, config);
    } catch (error) {
      return `its availability check failed: ${(error as Error).message}`;
    }
  }

  /** Listener names known to the dispatcher, in config order. */
  listenerNames(): string[] {
    return [...this.#listeners.keys()];
  }

  async call(request: CallRequest): Promise<ToolResult> {
    const started = performance.now();
    const record: CallRecord = {
      type: 'call',
      time: isoNow(),
      thread: request.thread,
      listener: request.listener,
      trust: this.#listeners.get(request.listener)?.trust ?? null,
      tool: request.tool,
      call_id: request.callId ?? randomUUID(),
      input: null,
      segment: null,
      verdict: null,
      rule_id: null,
      reason: null,
      suggestion: null,
      outcome: 'ok',
      code: null,
      message: null,
      duration_ms: 0,
    };
    if (request.by !== undefined) record.by = request.by;
    const span = request.trace?.tool(request.tool, record.call_id);
    let result: ToolResult;
    try {
      result = await this.#dispatch(request, record);
    } catch (error) {
      // A bug in the runtime itself still answers the caller rather than crashing it.
      result = {
        status: 'error',
        tool: request.tool,
        error: {
          code: 'InternalError' satisfies ToolFailureCode,
          message: `tool runtime failed: ${(error as Error).message}`,
        },
      };
    }
    record.duration_ms = Math.round((performance.now() - started) * 1000) / 1000;
    record.outcome = result.status;
    if (result.status !== 'ok') {
      record.code = result.error.code;
      record.message = redactString(result.error.message);
    }
    this.#options.audit?.append(record);
    span?.end(record, result.status === 'ok' ? result.value : result.error);
    return result;
  }

  async #dispatch(request: CallRequest, record: CallRecord): Promise<ToolResult> {
    const name = request.tool;
    record.input = redact(request.args);
    // Nothing runs before the workspace's size bound is in place; a failed mount fails the call.
    if (this.#pending) await this.#pending;

    // 0. the record can be kept: after the audit log changed under its writer, nothing runs until
    // an operator has looked (audit.on_change); the refusal itself is still recorded.
    const unrecorded = this.#options.audit?.refusal?.();
    if (unrecorded !== undefined) return failed(name, refuse('AuditLogChanged', unrecorded));

    // 1. exists
    const tool = this.#registry.get(name);
    const listener = this.#listeners.get(request.listener);
    if (!tool) {
      const hint = listener ? didYouMean(String(name), [...listener.tools.keys()]) : '';
      return failed(name, refuse('ToolNotFound', `no tool named "${String(name)}"${hint}`));
    }
    // 2. granted
    const settings = listener?.tools.get(name);
    if (!listener || !settings) {
      return failed(name, refuse('PermissionDenied', `tool ${name} is not granted to ${request.listener}`));
    }
    // 3. not revoked
    const revoked = this.#revoked(name);
    if (revoked) return failed(name, refuse('ToolRevoked', `tool ${name} is revoked: ${revoked.reason}`));
    // 4. integrity
    const integrity = this.#options.integrity?.check(tool);
    if (integrity)
      return failed(
        name,
        refuse('IntegrityFailure', `tool ${name} failed its integrity check: ${integrity}`),
      );
    // 5. available
    const unavailable = this.#unavailable(tool, settings.config);
    if (unavailable)
      return failed(name, refuse('ToolUnavailable', `tool ${name} is unavailable: ${unavailable}`));
    // 6. arguments: validated on a copy, which gets the schema's defaults and is what the tool sees.
    let args: unknown;
    try {
      args = request.args === undefined || request.args === null ? {} : copyJsonArgs(request.args);
    } catch (error) {
      return failed(
        name,
        refuse(
          'InvalidArguments',
          `arguments for ${name} must be plain JSON data: ${(error as Error).message}`,
        ),
      );
    }
    if (tool.standardArgs) {
      // A Standard Schema checks its own arguments; what it gives back is what the tool runs with.
      const checked = await checkStandardArgs(tool.standardArgs, args);
      if ('refusal' in checked)
        return failed(name, refuse('InvalidArguments', `invalid arguments for ${name}: ${checked.refusal}`));
      args = checked.value;
    } else if (!tool.validateArgs(args)) {
      return failed(
        name,
        refuse(
          'InvalidArguments',
          `invalid arguments for ${name}: ${formatArgErrors(tool.validateArgs.errors, args, tool.argNames)}`,
        ),
      );
    }
    // 7. capability scope: grants intersected with the thread's scope, never widened.
    // An MCP tool's capability depends on the listener's tool_config (trusted, capability): src/mcp.
    const capability = tool.definition.capabilityFor?.(settings.config) ?? tool.definition.capability;
    if (request.scope !== undefined && !request.scope.includes(capability)) {
      return failed(
        name,
        refuse(
          'OutsideScope',
          `tool ${name} needs capability ${capability}, which is outside this thread's scope [${request.scope.join(', ')}]`,
        ),
      );
    }
    // 8. guard
    const warnings: string[] = [];
    if (tool.definition.guard) {
      let verdict: Verdict;
      try {
        verdict = await this.#options.guard(tool.definition.guard, {
          tool: name,
          args: args as Record<string, unknown>,
          trust: listener.trust,
          toolConfig: settings.config,
          workspace: this.#options.workspace,
        });
      } catch (error) {
        // Fail closed: a guard that cannot judge does not let the call through.
        return failed(
          name,
          refuse('GuardError', `the ${tool.definition.guard} guard failed: ${(error as Error).message}`),
        );
      }
      record.verdict = verdict.verdict;
      record.rule_id = verdict.rule_id;
      record.reason = verdict.reason === null ? null : redactString(verdict.reason);
      record.suggestion = verdict.suggestion === null ? null : redactString(verdict.suggestion);
      record.segment = verdict.segment === undefined ? null : redactString(verdict.segment);
      const rule = verdict.rule_id ?? `${tool.definition.guard}.unspecified`;
      const why = verdict.reason ?? 'no reason given';
      if (verdict.verdict === 'deny') {
        const extra: Partial<ToolFailure> = { rule_id: rule };
        if (verdict.suggestion) extra.suggestion = verdict.suggestion;
        return failed(
          name,
          refuse('GuardDenied', `denied by ${rule}: ${withSuggestion(why, verdict.suggestion)}`, extra),
        );
      }
      if (verdict.verdict === 'warn') {
        warnings.push(`${rule}: ${why}${verdict.suggestion ? ` (${verdict.suggestion})` : ''}`);
      }
    }
    // 8a. approval: a person decides, when tool_config asks for it (needs the verdict; see approval/step.ts).
    // `never` (the default) costs the call nothing: no step object, no await.
    if (settings.approval.mode !== 'never') {
      const approval = await approvalStep(this.#options.approvals, {
        thread: request.thread,
        listener: listener.name,
        tool: name,
        callId: record.call_id,
        args,
        verdict: record.verdict,
        ruleId: record.rule_id,
        settings: settings.approval,
        definition: tool.definition,
        ...(request.waiting ? { waiting: request.waiting } : {}),
        // Its user may be asked too (approval/elicit.ts).
        ...(request.client ? { client: request.client } : {}),
      });
      if (approval && approval.status !== 'approved') return failed(name, approval);
      if (approval) {
        record.approval = approval.approval;
        record.args_sha256 = approval.args_sha256;
      }
    }
    // 9. once: a call repeated under its id gets the first call's answer, taking no rate or loop budget.
    if (!tool.definition.sideEffect || request.callId === undefined)
      return this.#run(tool, args, settings, listener, request, record, warnings);
    return this.#once(request.callId, name, settings.timeoutMs, record, () =>
      this.#run(tool, args, settings, listener, request, record, warnings),
    );
  }

  /**
   * A side-effecting call acts once per call id when the organism keeps an effect log (a message
   * delivered again after a crash, by Redis or by the bus journal, repeats its calls with the same
   * ids); see ./once.ts. Calls refused before here (grant, guard, ...) act on nothing and are not
   * recorded; a rate or loop refusal after the claim is recorded as that call's answer.
   */
  async #once(
    callId: string,
    name: string,
    timeoutMs: number,
    record: CallRecord,
    run: () => Promise<ToolResult>,
  ) {
    // The daemon's state store reports forged records itself; one opened here reports to this audit.
    const log = await effectLogFor(this.#options.services, (t) =>
      this.#options.audit?.append(stateThreatRecord(t)),
    );
    if (!log) return run();
    const first = await log.begin(callId, name, timeoutMs + 1_000);
    if (first) {
      if (first.status === 'ok')
        record.message = 'repeated call id: answered with the first result, not run again';
      return first;
    }
    const result = await run();
    await log.finish(callId, result);
    return result;
  }

  async #run(
    tool: RegisteredTool,
    args: unknown,
    settings: ResolvedToolConfig,
    listener: ResolvedListener,
    request: CallRequest,
    record: CallRecord,
    warnings: string[],
  ): Promise<ToolResult> {
    const name = tool.definition.name;
    // 10. rate limit
    if (settings.rateLimit) {
      // Several daemons (redis transport) share one bucket per listener and tool.
      const key = `${listener.name}\u0000${name}`;
      const shared = await sharedRateLimiter(this.#options.services);
      const wait = shared
        ? await shared.take(key, settings.rateLimit)
        : this.#limiter.take(key, settings.rateLimit);
      if (wait > 0) {
        return failed(
          name,
          refuse(
            'RateLimited',
            `rate limit for ${name} (${settings.rateLimit.per_minute} per minute) reached; retry in ${Math.ceil(wait / 1000)} s`,
          ),
        );
      }
    }
    // 11. loop
    if (this.#loops.record(request.thread, loopKey(name, args))) {
      return failed(
        name,
        refuse(
          'LoopDetected',
          `${name} was called with the same arguments ${this.#defaults.loopRepeats} times within the last ${this.#defaults.loopWindow} calls of this thread; change the arguments or try another approach`,
        ),
      );
    }
    // 12. run with a timeout and an AbortSignal
    const value = await runTool(tool, args, settings, {
      thread: request.thread,
      callId: record.call_id,
      listener,
      workspace: this.#options.workspace,
      dataDir: this.#options.dataDir,
      services: this.#options.services,
      client: request.client,
    });
    if ('failure' in value) return failed(name, value.failure);
    // Checked here, once for every way out (MCP, API, history), instead of by each reader.
    const wrong = isToolContent(value.ok) ? checkContent(value.ok) : null;
    if (wrong) {
      return failed(name, {
        status: 'error',
        code: 'InvalidContent' satisfies ToolFailureCode,
        message: `${name} returned content that is not well formed: ${wrong}`,
      });
    }
    // 13. cap
    let capped: ReturnType<typeof capResult>;
    try {
      capped = capResult(value.ok, settings.maxResultBytes);
    } catch (error) {
      return failed(name, {
        status: 'error',
        code: 'ResultNotSerializable' satisfies ToolFailureCode,
        message: `${name} returned a result that is not JSON: ${(error as Error).message}`,
      });
    }
    const result: ToolResult = capped.truncated
      ? { status: 'ok', tool: name, value: capped.value as string, truncated: capped.truncated }
      : { status: 'ok', tool: name, value: capped.value };
    if (warnings.length > 0) result.warnings = warnings;
    return result;
  }
}
