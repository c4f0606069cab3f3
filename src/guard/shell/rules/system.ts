/** System: power, init, services, firewall, cron, accounts, kernel, reverse shells, fork bombs. */
import { posix } from 'node:path';
import type { Cmd } from '../cmd.ts';
import {
  flags,
  has,
  positionals,
  type RawRule,
  type ShellRule,
  writeTargets,
  writtenFiles,
} from '../match.ts';
import { SHELLS, shellMode } from '../wrappers.ts';

const SYSTEMCTL_WITH_VALUE = new Set([
  '-H',
  '--host',
  '-M',
  '--machine',
  '-t',
  '--type',
  '-s',
  '--signal',
  '-p',
  '--property',
  '--state',
  '--root',
  '-o',
  '--output',
  '-n',
  '--lines',
]);

/** The kernel's settings in procfs: every sysctl, and the magic SysRq trigger. */
const KERNEL_SETTING = /^\/proc\/(sys\/|sysrq-trigger$)/;

export function systemctlVerb(c: Cmd): string {
  return positionals(c.args, SYSTEMCTL_WITH_VALUE)[0] ?? '';
}

const toTcp = (c: Cmd) =>
  writeTargets(c)
    .concat(c.redirects.filter((r) => r.op === '<' || r.op === '<>').map((r) => r.target?.text ?? ''))
    .some((t) => /^\/dev\/(tcp|udp)\//.test(t));

/** Clients whose pipe is a network connection (`sh -i | nc host port`, `telnet h p | sh | telnet h q`). */
const SOCKET_CLIENTS = new Set(['nc', 'ncat', 'netcat', 'telnet', 'cryptcat', 'socat', 'sbd']);

/** A shell reading commands on stdin, in a pipeline with a network client. */
function shellOnSocket(c: Cmd): boolean {
  if (c.pipeline.length < 2 || c.inlineScript || shellMode(c.args).mode !== 'stdin') return false;
  return c.pipeline.some(
    (s) => s !== c && (SOCKET_CLIENTS.has(s.name) || (s.name === 'openssl' && s.args[0] === 's_client')),
  );
}

/** The PIDs `kill` signals: past a signal option (`-9`, `-KILL`, `-s SIG`, `-n N`) and `--`. */
function killTargets(args: readonly string[]): string[] {
  let i = 0;
  if (args[i] === '-s' || args[i] === '-n') i += 2;
  else if (args.length > 1 && args[i]!.startsWith('-') && args[i] !== '--') i++;
  if (args[i] === '--') i++;
  return args.slice(i);
}

export const SYSTEM_RULES: ShellRule[] = [
  {
    id: 'shell.system.shutdown',
    severity: 'destructive',
    reason: 'Shuts down, reboots or suspends the machine.',
    suggestion: 'Leave power management to an operator.',
    commands: ['shutdown', 'reboot', 'poweroff', 'halt', 'init', 'telinit', 'systemctl', 'loginctl'],
    match: (c) => {
      if (c.name === 'init' || c.name === 'telinit') return /^[06sS]$/.test(c.args[0] ?? '');
      if (c.name === 'systemctl' || c.name === 'loginctl')
        return /^(poweroff|reboot|halt|kexec|suspend|hibernate|hybrid-sleep|emergency|rescue)$/.test(
          systemctlVerb(c),
        );
      return !(c.name === 'shutdown' && has(c, 'c'));
    },
  },
  {
    id: 'shell.system.kill_init',
    severity: 'catastrophic',
    commands: ['kill', 'killall5', 'pkill', 'killall'],
    reason: 'Kills PID 1 (init) or every process (-1): the machine or session goes down.',
    suggestion: 'Kill the specific process you started, by its PID.',
    match: (c) => {
      if (c.name === 'killall5') return true;
      if (c.name === 'kill') return killTargets(c.args).some((p) => p === '1' || p === '-1');
      return flags(c).positionals.some((p) => p === 'init' || p === 'systemd');
    },
  },
  {
    id: 'shell.system.fork_bomb',
    severity: 'catastrophic',
    commands: ['perl', 'python', 'python3', 'ruby'],
    reason: 'A fork bomb: it spawns processes until the machine stops responding.',
    suggestion: 'Do not run this.',
    match: (c) =>
      c.args.some((a) => /\bfork\b[^;]*\bwhile\b[^;]*\bfork\b|while\s*(True|1)\s*:\s*os\.fork\(\)/.test(a)),
  },
  {
    id: 'shell.system.service_stop',
    severity: 'destructive',
    commands: ['systemctl', 'service', 'launchctl', 'rc-service'],
    reason: 'Stops, disables or masks a system service.',
    suggestion: 'Leave system services to an operator; restart only what you started.',
    match: (c) => {
      if (c.name === 'systemctl') return /^(stop|disable|mask|kill|isolate)$/.test(systemctlVerb(c));
      if (c.name === 'launchctl') return /^(unload|bootout|remove|disable|stop)$/.test(c.args[0] ?? '');
      return /^(stop|disable)$/.test(c.args[1] ?? '');
    },
  },
  {
    id: 'shell.system.firewall_flush',
    severity: 'destructive',
    commands: [
      'iptables',
      'ip6tables',
      'iptables-legacy',
      'iptables-nft',
      'nft',
      'ufw',
      'firewall-cmd',
      'pfctl',
    ],
    reason: 'Flushes, disables or opens the firewall.',
    suggestion: 'Leave firewall changes to an operator.',
    match: (c) => {
      if (c.name === 'nft') return /^(flush|delete)$/.test(c.args[0] ?? '');
      if (c.name === 'ufw') return /^(disable|reset)$/.test(c.args[0] ?? '');
      if (c.name === 'firewall-cmd')
        return c.args.some((a) => /^--(panic-off|set-default-zone=trusted|remove-|zone=trusted)/.test(a));
      if (c.name === 'pfctl') return has(c, 'dF');
      return (
        has(c, 'FX', '--flush', '--delete-chain') ||
        c.args.some((a, i) => (a === '-P' || a === '--policy') && c.args[i + 2] === 'ACCEPT')
      );
    },
  },
  {
    id: 'shell.system.crontab_remove',
    severity: 'destructive',
    commands: ['crontab'],
    reason: 'crontab -r deletes every scheduled job of the user.',
    suggestion: 'Edit the crontab (crontab -l > file, change it, crontab file) instead.',
    match: (c) => has(c, 'r'),
  },
  {
    id: 'shell.system.user_change',
    severity: 'destructive',
    commands: [
      'useradd',
      'userdel',
      'usermod',
      'adduser',
      'deluser',
      'addgroup',
      'delgroup',
      'groupadd',
      'groupdel',
      'groupmod',
      'gpasswd',
      'passwd',
      'chpasswd',
      'chsh',
      'chfn',
      'chage',
      'vipw',
      'vigr',
      'visudo',
      'dscl',
      'sysadminctl',
      'net',
    ],
    reason: 'Changes user accounts, groups, passwords or sudo rights.',
    suggestion: 'Account administration is for an operator.',
    match: (c) =>
      c.name === 'passwd'
        ? !has(c, 'S', '--status')
        : c.name === 'net'
          ? /^(user|localgroup)$/i.test(c.args[0] ?? '')
          : true,
  },
  {
    id: 'shell.system.root_shell',
    severity: 'risky',
    commands: ['sudo', 'doas', 'su', 'pkexec', 'run0'],
    reason: 'Opens an interactive root shell.',
    suggestion: 'Run the one command that needs privileges, not a shell.',
    match: (c) =>
      c.name === 'su' ? !c.inlineScript : has(c, 'is', '--login', '--shell') || c.args.length === 0,
  },
  {
    id: 'shell.system.kernel_module',
    severity: 'risky',
    commands: ['insmod', 'rmmod', 'modprobe', 'kextload', 'kextunload', 'sysctl'],
    reason: 'Loads or removes kernel modules, or changes kernel parameters.',
    suggestion: 'Kernel changes are for an operator.',
    match: (c) =>
      c.name === 'sysctl'
        ? has(c, 'wp', '--write', '--load') || c.args.some((a) => a.includes('='))
        : c.name !== 'modprobe' || !has(c, 'n', '--dry-run', '--show-depends'),
  },
  {
    id: 'shell.system.kernel_settings',
    severity: 'destructive',
    reason:
      'Writes the kernel’s settings through /proc (/proc/sys/..., /proc/sysrq-trigger): changes the whole machine, and kernel.core_pattern runs a program as root.',
    suggestion: 'Kernel changes are for an operator.',
    match: (c) => writtenFiles(c).some((t) => KERNEL_SETTING.test(posix.normalize(t))),
  },
  {
    id: 'shell.system.history_tamper',
    severity: 'risky',
    commands: ['history', 'unset', 'export'],
    reason: 'Clears or disables the shell history, hiding what was run.',
    suggestion: 'Leave the history alone.',
    match: (c) => {
      if (c.name === 'history') return has(c, 'cw');
      if (c.name === 'unset') return c.args.includes('HISTFILE');
      return c.args.some((a) => /^HIST(FILE=\/dev\/null|SIZE=0|FILESIZE=0)$/.test(a));
    },
  },
  {
    id: 'shell.system.reverse_shell',
    severity: 'catastrophic',
    reason: 'Connects a shell to a network socket (a reverse or bind shell).',
    suggestion: 'Do not expose a shell over the network.',
    match: (c) => {
      if (c.inlineNet?.shell) return true;
      if (SHELLS.has(c.name) && (toTcp(c) || shellOnSocket(c))) return true;
      if (/^(nc|ncat|netcat)$/.test(c.name)) return has(c, 'ec', '--exec', '--sh-exec', '--lua-exec');
      if (c.name === 'socat') return c.args.some((a) => /^(exec|system):/i.test(a));
      return false;
    },
  },
  {
    id: 'shell.system.dev_tcp',
    severity: 'risky',
    reason: 'Reads or writes a raw network socket through /dev/tcp or /dev/udp.',
    suggestion: 'Use an HTTP client such as curl against a known service.',
    match: toTcp,
  },
];

/** Rules on raw text: a fork bomb is a function that pipes into itself in the background. */
export const SYSTEM_RAW_RULES: RawRule[] = [
  {
    id: 'shell.system.reverse_shell',
    severity: 'catastrophic',
    reason: 'Connects a shell to a network socket (a reverse or bind shell).',
    suggestion: 'Do not expose a shell over the network.',
    // `exec 5<>/dev/tcp/h/p`, then a shell, or a command read from it (`$line`), on fd 5.
    pattern:
      /\bexec\s+(\d+)\s*<>\s*\/dev\/(?:tcp|udp)\/[\s\S]*?(?:^|[;&|(\n]|\bdo|\bthen)\s*(?:\S*\/)?(?:(?:ba|z|da|k|mk|c|tc|a|y)?sh\b|\$\{?\w+\}?)[^;&|\n]*?[<>]&\s*\1\b/,
  },
  {
    id: 'shell.system.fork_bomb',
    severity: 'catastrophic',
    reason: 'A fork bomb: it spawns processes until the machine stops responding.',
    suggestion: 'Do not run this.',
    pattern: /([A-Za-z_:.][\w:.]*)\s*\(\s*\)\s*\{[^}]*?\1\s*\|\s*\1\s*&[^}]*\}/,
  },
];
