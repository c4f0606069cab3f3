/**
 * What every guard returns and what it is given. A verdict is plain data so the dispatcher can put
 * it into a tool result, the audit log and the `guard check` output unchanged.
 */
import type { ToolConfig, TrustLevel } from '../config/types.ts';

export type VerdictKind = 'allow' | 'warn' | 'deny';

export interface Verdict {
  verdict: VerdictKind;
  /** Stable id of the rule that decided, e.g. `shell.git.push_force`; null for a plain allow. */
  rule_id: string | null;
  /** Why, in words an agent can act on; null for a plain allow. */
  reason: string | null;
  /** What to do instead; null when there is nothing better to suggest. */
  suggestion: string | null;
  /** The matched command segment, path or host. */
  segment?: string;
}

export interface GuardInput {
  tool: string;
  args: Record<string, unknown>;
  trust: TrustLevel;
  toolConfig: ToolConfig;
  /** Absolute path of the organism's workspace. */
  workspace: string;
}

/**
 * How bad a rule's match is; the trust level turns it into a verdict (see `verdictFor`).
 * - catastrophic: denied at every trust level (rm -rf /, fork bombs, curl | sh, dd to a disk).
 * - destructive: denied at low and medium, a warning at high.
 * - risky: denied at low, a warning at medium and high.
 */
export type Severity = 'catastrophic' | 'destructive' | 'risky';

const TABLE: Record<Severity, Record<TrustLevel, VerdictKind>> = {
  catastrophic: { low: 'deny', medium: 'deny', high: 'deny' },
  destructive: { low: 'deny', medium: 'deny', high: 'warn' },
  risky: { low: 'deny', medium: 'warn', high: 'warn' },
};

export function verdictFor(severity: Severity, trust: TrustLevel): VerdictKind {
  return TABLE[severity][trust];
}

export const ALLOW: Verdict = Object.freeze({
  verdict: 'allow',
  rule_id: null,
  reason: null,
  suggestion: null,
});

export function allow(): Verdict {
  return { verdict: 'allow', rule_id: null, reason: null, suggestion: null };
}

export function deny(rule_id: string, reason: string, suggestion: string | null, segment?: string): Verdict {
  const v: Verdict = { verdict: 'deny', rule_id, reason, suggestion };
  if (segment !== undefined) v.segment = segment;
  return v;
}

/**
 * A verdict's reason and suggestion as one message: `reason; suggestion`, or, when the reason is
 * already a sentence (`...filesystem root.`), `reason Suggestion` — never `root.; Delete`.
 */
export function withSuggestion(reason: string, suggestion: string | null | undefined): string {
  if (!suggestion) return reason;
  const trimmed = reason.trimEnd();
  return /[.!?]$/.test(trimmed) ? `${trimmed} ${suggestion}` : `${reason}; ${suggestion}`;
}

const RANK: Record<VerdictKind, number> = { allow: 0, warn: 1, deny: 2 };

/** The stricter of two verdicts; the first wins a tie so catalog order decides between equals. */
export function stricter(a: Verdict, b: Verdict): Verdict {
  return RANK[b.verdict] > RANK[a.verdict] ? b : a;
}
