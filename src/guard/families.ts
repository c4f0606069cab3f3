/**
 * The families a rule belongs to, for `organism guard explain` and the guards page: the risk
 * families (issue 31), which gather rules from several catalogs under one name, and otherwise the
 * family a rule id names (`shell.git.push_force` is git's).
 */

export interface Family {
  /** Short name, e.g. `persistence`. */
  name: string;
  /** What the family is about, in one line. */
  about: string;
}

export interface RiskFamily extends Family {
  /** The rule ids that judge it. */
  rules: readonly string[];
}

export const RISK_FAMILIES: readonly RiskFamily[] = [
  {
    name: 'exfiltration',
    about: 'a local file from outside the workspace, or the environment, sent to the network',
    rules: ['shell.exfil.upload', 'shell.exfil.environment'],
  },
  {
    name: 'network shell',
    about: 'a shell handed to the network: reverse and bind shells, in shell or in inline code',
    rules: ['shell.system.reverse_shell'],
  },
  {
    name: 'persistence',
    about:
      'code that runs again later: cron, at, services and init scripts, autostart, git hooks, shell startup files',
    rules: [
      'shell.persistence.cron',
      'shell.persistence.at',
      'shell.persistence.service',
      'shell.persistence.autostart',
      'shell.persistence.git_hook',
      'shell.filesystem.write_startup_file',
    ],
  },
  {
    name: 'privilege',
    about:
      'rights beyond the task: setuid/setgid bits, file capabilities, system file permissions, sudo abuse, sudoers and accounts',
    rules: [
      'shell.privilege.setuid',
      'shell.privilege.capabilities',
      'shell.privilege.system_permissions',
      'shell.privilege.sudo',
      'shell.system.user_change',
      'shell.system.root_shell',
    ],
  },
  {
    name: 'evidence destruction',
    about:
      'wiping the record outside the workspace: system logs, the journal, the audit trail, shell histories',
    rules: ['shell.evidence.logs', 'shell.evidence.history', 'shell.system.history_tamper'],
  },
  {
    name: 'destructive expansion',
    about: 'a command word known only at run time with destructive arguments ($X -rf /)',
    rules: ['shell.expansion.destructive'],
  },
  {
    name: 'credentials',
    about: 'credential files that CLIs, package managers and cloud SDKs keep, read or copied',
    rules: ['file.sensitive', 'shell.filesystem.read_secrets', 'shell.filesystem.recursive_read_secrets'],
  },
];

const byRule = new Map<string, RiskFamily>();
for (const f of RISK_FAMILIES) for (const r of f.rules) byRule.set(r, f);

/** What the other rule families are about, by the part of their id after the guard's name. */
const ABOUT: Record<string, string> = {
  'shell.filesystem': 'deleting, overwriting or formatting files and disks',
  'shell.git': 'history that cannot be recovered (force pushes, hard resets, deleted branches)',
  'shell.database': 'dropping or emptying databases and tables',
  'shell.containers': 'removing containers, volumes, clusters and their data',
  'shell.cloud': 'deleting cloud resources',
  'shell.system': 'the machine itself: power, services, firewall, accounts, kernel',
  'shell.publish': 'releases that cannot be taken back (npm, PyPI, crates, images)',
  'shell.pipe': 'code run without being read (curl | sh, decoded blobs)',
  'shell.obfuscation': 'commands that cannot be read before they run',
  'shell.inline': 'inline interpreter code the guard cannot read',
  'shell.parse': 'a command line that cannot be checked',
  'shell.trust': 'what low trust allows',
  'shell.config': "run_command's own tool_config (blocked_commands)",
  file: 'paths the file tools may use',
  web: 'addresses fetch_url and webhook may reach',
  email: 'recipients and content send_email may send',
};

/** The family a rule id belongs to, or null for a plain allow. */
export function familyOf(ruleId: string | null): Family | null {
  if (ruleId === null) return null;
  const risk = byRule.get(ruleId);
  if (risk) return { name: risk.name, about: risk.about };
  const parts = ruleId.split('.');
  const key = parts[0] === 'shell' ? parts.slice(0, 2).join('.') : parts[0]!;
  return { name: key.replace(/^shell\./, ''), about: ABOUT[key] ?? 'the guard’s own checks' };
}
