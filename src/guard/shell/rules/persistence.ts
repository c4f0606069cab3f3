/**
 * Persistence: code that runs again later without anyone asking (cron, at, services and init
 * scripts, desktop and launchd autostart, git hooks). Shell startup files and authorized_keys are
 * filesystem.ts's write_startup_file, kept under its id.
 */
import type { Cmd } from '../cmd.ts';
import { has, positionals, type ShellRule } from '../match.ts';
import { CHANGERS, changes, placeOf } from '../places.ts';
import { gitCall } from './git.ts';
import { systemctlVerb } from './system.ts';

const CRON_PATH =
  /^\/(private\/)?(etc\/(cron\.(d|hourly|daily|weekly|monthly)|crontab|anacrontab)|var\/spool\/(cron|anacron)|usr\/lib\/cron\/tabs|var\/at\/tabs|var\/spool\/at)(\/|$)/;
const SERVICE_PATH =
  /^(\/(etc|usr\/lib|lib|run)\/systemd\/|~\/\.config\/systemd\/|~\/\.local\/share\/systemd\/|\/etc\/(init\.d|init|rc\.local|rc\d?\.d|rc\.conf|inittab|supervisor|supervisord\.conf)(\/|$))/;
const AUTOSTART_PATH =
  /^(~\/\.config\/(autostart|lxsession|openbox\/autostart)|\/etc\/xdg\/autostart|~\/Library\/LaunchAgents|\/Library\/Launch(Agents|Daemons)|\/System\/Library\/Launch(Agents|Daemons)|~\/\.(xinitrc|xprofile|xsessionrc|xsession))(\/|$)/;
const GIT_HOOK_PATH = /(^|\/)\.git\/hooks(\/|$)/;
/** git settings whose value is a program git runs by itself (hooks, a file monitor, ssh). */
const GIT_RUNS = /^(core\.(hookspath|fsmonitor|sshcommand)|init\.templatedir)$/i;

/** Rules that read what a command writes look at these commands, and at any with a redirection. */
const WRITERS = [...CHANGERS];
const REDIRECTED = { redirects: true } as const;

const SYSTEMD_PERSIST = /^(enable|reenable|link|preset|preset-all|set-default|edit|add-wants|add-requires)$/;
const SYSTEMD_RUN_TIMER =
  /^--(on-calendar|on-active|on-boot|on-startup|on-unit-active|on-unit-inactive|on-clock-change|on-timezone-change|timer-property)(=|$)/;

/** The command leaves a file at a place matching `re` (written, appended, linked, made executable). */
function places(c: Cmd, re: RegExp): boolean {
  for (const ch of changes(c)) {
    if (ch.kind === 'delete') continue;
    if (ch.kind === 'mode' && c.name !== 'chmod') continue;
    if (re.test(placeOf(c, ch.path))) return true;
  }
  return false;
}

export const PERSISTENCE_RULES: ShellRule[] = [
  {
    id: 'shell.persistence.cron',
    severity: 'destructive',
    commands: ['crontab', ...WRITERS],
    also: REDIRECTED,
    reason: 'Installs a cron job: a command that runs again on a schedule, after this task is over.',
    suggestion: 'Run the command now, or leave scheduled jobs to an operator (crontab -l only lists them).',
    match: (c) => {
      if (c.name === 'crontab') return !has(c, 'lrTV', '--help', '--list');
      return places(c, CRON_PATH);
    },
  },
  {
    id: 'shell.persistence.at',
    severity: 'destructive',
    commands: ['at', 'batch'],
    reason: 'Queues a command with at or batch: it runs later, when nobody is watching.',
    suggestion: 'Run the command now; atq lists queued jobs.',
    match: (c) => c.name === 'batch' || !has(c, 'lrdcV', '--help'),
  },
  {
    id: 'shell.persistence.service',
    severity: 'destructive',
    commands: ['systemctl', 'systemd-run', 'update-rc.d', 'chkconfig', 'rc-update', ...WRITERS],
    also: REDIRECTED,
    reason:
      'Installs or enables a service, init script or timer that starts by itself (at boot, login or on a schedule).',
    suggestion: 'Run the program in the foreground for this task; services are installed by an operator.',
    match: (c) => {
      switch (c.name) {
        case 'systemctl':
          return SYSTEMD_PERSIST.test(systemctlVerb(c));
        case 'systemd-run':
          return c.args.some((a) => SYSTEMD_RUN_TIMER.test(a));
        case 'update-rc.d':
          return !has(c, 'n');
        case 'chkconfig':
          return c.args.some((a) => a === '--add' || a === 'on');
        case 'rc-update':
          return c.args[0] === 'add';
        default:
          return places(c, SERVICE_PATH);
      }
    },
  },
  {
    id: 'shell.persistence.autostart',
    severity: 'destructive',
    commands: ['launchctl', ...WRITERS],
    also: REDIRECTED,
    reason:
      'Adds a program that starts by itself at login (desktop autostart, launchd agents, X session files).',
    suggestion: 'Run the program for this task only; login items are set up by the machine’s user.',
    match: (c) =>
      c.name === 'launchctl'
        ? /^(load|bootstrap|submit|enable)$/.test(c.args[0] ?? '')
        : places(c, AUTOSTART_PATH),
  },
  {
    id: 'shell.persistence.git_hook',
    severity: 'destructive',
    commands: ['git', ...WRITERS],
    also: REDIRECTED,
    reason:
      'Installs a git hook (or points git at programs of its own): code that runs at the next commit, checkout or merge, whoever makes it.',
    suggestion: 'Run the script directly; hooks are set up by the repository’s maintainers.',
    match: (c) => {
      if (c.name === 'git') {
        const call = gitCall(c);
        if (call?.sub !== 'config') return false;
        const p = positionals(call.args, new Set(['-f', '--file', '--blob', '--type', '--default']));
        return (
          p.length >= 2 && GIT_RUNS.test(p[0]!) && !has(c, '', '--get', '--get-all', '--unset', '--list')
        );
      }
      return places(c, GIT_HOOK_PATH);
    },
  },
];
