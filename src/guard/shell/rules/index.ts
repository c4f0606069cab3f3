/** The whole shell catalog, indexed by command name so a check looks only at rules that can match. */
import type { Cmd } from '../cmd.ts';
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
/** Rules for commands with a trait (`also`), by the trait's bit (see traits()). */
const byTrait: ShellRule[][] = [[], [], [], []];
const TRAIT_BITS = { redirects: 1, inlineNet: 2, elevated: 4, dynamic: 8 } as const;
for (const rule of SHELL_RULES) {
  if (!rule.commands && !rule.also) universal.push(rule);
  for (const name of rule.commands ?? []) byName.set(name, [...(byName.get(name) ?? []), rule]);
  for (const trait of Object.keys(rule.also ?? {}) as (keyof typeof TRAIT_BITS)[])
    byTrait[Math.log2(TRAIT_BITS[trait])]!.push(rule);
}
// Keep catalog order when merging a command's own rules with the universal ones.
const order = new Map(SHELL_RULES.map((r, i) => [r, i]));
/** Merged lists of commands with rules of their own, one map per combination of traits. */
const merged: Map<string, readonly ShellRule[]>[] = Array.from({ length: 16 }, () => new Map());
/** The lists of every other command (any name): by traits alone, so unknown names cost no memory. */
const unnamed: (readonly ShellRule[] | undefined)[] = [universal];

function traits(c: Cmd): number {
  return (
    (c.redirects.length > 0 ? 1 : 0) |
    (c.inlineNet !== null ? 2 : 0) |
    (c.elevation !== null ? 4 : 0) |
    (c.dynamicName || c.globName ? 8 : 0)
  );
}

function mergedList(own: readonly ShellRule[], bits: number): readonly ShellRule[] {
  const set = new Set([...own, ...universal]);
  for (let k = 0; k < 4; k++) if (bits & (1 << k)) for (const r of byTrait[k]!) set.add(r);
  return [...set].sort((a, b) => order.get(a)! - order.get(b)!);
}

/** The rules that can match this command (by its name and its traits), in catalog order. */
export function rulesFor(c: Cmd): readonly ShellRule[] {
  const bits = traits(c);
  const own = byName.get(c.name);
  if (!own) {
    let rules = unnamed[bits];
    if (!rules) {
      rules = mergedList([], bits);
      unnamed[bits] = rules;
    }
    return rules;
  }
  const cache = merged[bits]!;
  let rules = cache.get(c.name);
  if (!rules) {
    rules = mergedList(own, bits);
    cache.set(c.name, rules);
  }
  return rules;
}
