/** The whole shell catalog, indexed by command name so a check looks only at rules that can match. */
import type { RawRule, ShellRule } from '../match.ts';
import { CLOUD_RULES } from './cloud.ts';
import { CONTAINER_RULES } from './containers.ts';
import { DATABASE_RULES } from './database.ts';
import { EVIDENCE_RULES } from './evidence.ts';
import { EXFIL_RULES } from './exfil.ts';
import { EXPANSION_RULES } from './expansion.ts';
import { FILESYSTEM_RULES } from './filesystem.ts';
import { GIT_RULES } from './git.ts';
import { INLINE_RULES } from './inline.ts';
import { PERSISTENCE_RULES } from './persistence.ts';
import { PIPE_RULES } from './pipe.ts';
import { PRIVILEGE_RULES } from './privilege.ts';
import { PUBLISH_RULES } from './publish.ts';
import { SYSTEM_RAW_RULES, SYSTEM_RULES } from './system.ts';

/**
 * Catalog order decides between rules of equal verdict: the most specific families first. The risk
 * families of issue 31 come before filesystem's generic write rules (a cron job in /etc/cron.d is
 * persistence before it is a system write); exfiltration comes after them, so a credential file
 * sent anywhere stays read_secrets.
 */
export const SHELL_RULES: readonly ShellRule[] = [
  ...PIPE_RULES,
  ...EXPANSION_RULES,
  ...PRIVILEGE_RULES,
  ...PERSISTENCE_RULES,
  ...EVIDENCE_RULES,
  ...FILESYSTEM_RULES,
  ...GIT_RULES,
  ...DATABASE_RULES,
  ...CONTAINER_RULES,
  ...CLOUD_RULES,
  ...SYSTEM_RULES,
  ...PUBLISH_RULES,
  ...INLINE_RULES,
  ...EXFIL_RULES,
];

export const RAW_RULES: readonly RawRule[] = [...SYSTEM_RAW_RULES];

const byName = new Map<string, ShellRule[]>();
const universal: ShellRule[] = [];
for (const rule of SHELL_RULES) {
  if (!rule.commands) universal.push(rule);
  else for (const name of rule.commands) byName.set(name, [...(byName.get(name) ?? []), rule]);
}
// Keep catalog order when merging a command's own rules with the universal ones.
const order = new Map(SHELL_RULES.map((r, i) => [r, i]));
const merged = new Map<string, ShellRule[]>();

/** The rules that can match a command of this name, in catalog order. */
export function rulesFor(name: string): readonly ShellRule[] {
  let rules = merged.get(name);
  if (rules) return rules;
  const own = byName.get(name);
  if (!own) return universal;
  rules = [...own, ...universal].sort((a, b) => order.get(a)! - order.get(b)!);
  merged.set(name, rules);
  return rules;
}
