/**
 * The tool side of a tested listener: the real Dispatcher (exists, granted, arguments, guard,
 * approval, once-only, limits, run, cap, audit) over the tools the test grants, with what it would
 * reach outside the process put in the test's hands: the stores in its temp folder, recorders for
 * webhook and send_email, the test's approval policy at the gate, the audit log in memory.
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SMTP_RESOURCE } from '../../tools/lib/mail-transport.ts';
import { WEBHOOK_DELIVERY_RESOURCE } from '../../tools/lib/net-request.ts';
import { auditKeyId } from '../audit/key.ts';
import type { AuditSink } from '../audit/log.ts';
import type { AuditEntry } from '../audit/record.ts';
import type { OrganismConfig } from '../config/types.ts';
import { daemonFiles } from '../guard/file.ts';
import { checkCall } from '../guard/index.ts';
import { organismCode } from '../guard/organism-code.ts';
import { openEmbeddedKvStore } from '../kv/embedded.ts';
import { STATE_FOLDER, STATE_RESOURCE_KEY } from '../state/open.ts';
import { StateSeal } from '../state/seal.ts';
import { RuntimeState, stateThreatRecord } from '../state/store.ts';
import type { Approval } from '../tools/approval/types.ts';
import { Dispatcher } from '../tools/dispatcher.ts';
import { ownCode, ownDataFiles } from '../tools/own-files.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { createToolServices } from '../tools/services.ts';
import { type ApprovalPolicy, policyGate } from './approval.ts';
import type { LiveToolName } from './builtins.ts';
import { type EmailRecorder, emailRecorder, type WebhookRecorder, webhookRecorder } from './recorders.ts';
import { type TestKv, type TestLibrarian, testKv, testLibrarian } from './stores.ts';

export interface KitToolsOptions {
  config: OrganismConfig;
  registry: ToolRegistry;
  /** Whether any tool is granted: without, the bus has no dispatcher (as before built-ins). */
  dispatch: boolean;
  policy: ApprovalPolicy | undefined;
  /** Built-ins that run as in production: no recorder takes their place. */
  live: readonly LiveToolName[];
  /** The listener under test: the default namespace of `kv`. */
  listener: string;
}

/** What a tested listener shows of its tools (TestedListener's fields of the same names). */
export interface KitTools {
  dispatcher: Dispatcher | undefined;
  kv: TestKv;
  librarian: TestLibrarian;
  webhooks: WebhookRecorder;
  emails: EmailRecorder;
  approvals: readonly Approval[];
  audit: readonly AuditEntry[];
  close(): Promise<void>;
}

/** The audit log of a test: every record, in order, as the daemon would have chained it. */
class MemoryAudit implements AuditSink {
  readonly records: AuditEntry[] = [];
  append(entry: AuditEntry): void {
    this.records.push(structuredClone(entry));
  }
  async flush(): Promise<void> {}
  async close(): Promise<void> {}
}

export async function kitTools(options: KitToolsOptions): Promise<KitTools> {
  const { config } = options;
  // The workspace the file tools and run_command work in: a plain folder in the test's temp folder
  // (the daemon's size-bounded volume is left out: mounting one needs root and takes a second).
  await mkdir(config.organism.workspace, { recursive: true });
  const { services, resources } = createToolServices(config);
  const audit = new MemoryAudit();
  // The runtime's own state (approvals, once-only effects) apart from the tools' stores, as in the
  // daemon, sealed with a key of this test only: the developer's audit key is never read.
  const secret = randomBytes(32);
  const state = new RuntimeState({
    open: () => openEmbeddedKvStore({ dir: join(config.organism.data_dir, STATE_FOLDER) }),
    seal: new StateSeal(() => [{ id: auditKeyId(secret), secret }]),
    threat: (threat) => audit.append(stateThreatRecord(threat)),
  });
  await resources.get(
    STATE_RESOURCE_KEY,
    () => state,
    (s) => s.close(),
  );
  const webhooks = webhookRecorder();
  const emails = emailRecorder();
  // The recorders take the network's place before any call can make the real thing.
  if (!options.live.includes('webhook'))
    await resources.get(WEBHOOK_DELIVERY_RESOURCE, () => webhooks.delivery);
  if (!options.live.includes('send_email')) await resources.get(SMTP_RESOURCE, () => emails.transport);
  // The file guard keeps the file tools off what it keeps them off in the daemon (own-files.ts):
  // the organism's files, the developer's audit key and checkpoints, and the code a daemon runs.
  const own = config.file;
  const code = await ownCode(config);
  const codeKey = Symbol('test kit');
  daemonFiles.set(own, ownDataFiles(config, process.env));
  organismCode.set(codeKey, code);
  const approvals: Approval[] = [];
  const gate = policyGate({ policy: options.policy, state, audit, decisions: approvals });
  const dispatcher = options.dispatch
    ? new Dispatcher({
        registry: options.registry,
        listeners: config.listeners,
        workspace: config.organism.workspace,
        dataDir: config.organism.data_dir,
        guard: checkCall,
        audit,
        services,
        configFile: own,
        approvals: gate,
      })
    : undefined;
  return {
    dispatcher,
    kv: testKv(services, options.listener),
    librarian: testLibrarian(services),
    webhooks: webhooks.recorder,
    emails: emails.recorder,
    approvals,
    audit: audit.records,
    async close() {
      gate.close();
      daemonFiles.delete(own);
      organismCode.delete(codeKey);
      await resources.closeAll();
    },
  };
}
