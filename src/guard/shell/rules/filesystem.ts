/** Filesystem: recursive deletes, permission sweeps, disk formatting and raw device writes. */
import type { Cmd } from '../cmd.ts';
import {
  flags,
  has,
  isDevice,
  isSystemPath,
  type ShellRule,
  targets,
  targetsIn,
  writtenFiles,
  writtenPaths,
} from '../match.ts';
import { readsSecret } from '../readers.ts';
import { recursiveSecretRead } from '../trees.ts';

const recursiveRm = (c: Cmd) => has(c, 'rR', '--recursive');
const RM = ['rm'];
const OWNERSHIP = ['chmod', 'chown', 'chgrp', 'setfacl'];

/** Files the shell or sshd runs or trusts at login: writing one persists code or access. */
const STARTUP_FILE =
  /(^|\/)(\.(bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile|zshenv|zlogin|zlogout|kshrc|cshrc|tcshrc|pam_environment)|\.ssh\/(authorized_keys2?|rc|environment)|\.config\/fish\/(config\.fish|conf\.d\/[^/]+))$|^\/etc\/(profile|profile\.d\/[^/]+|bash\.bashrc|zsh\/[^/]+|environment)$/;
/** Editors that change a file in place (`sed -i`, `perl -pi`): they write it as surely as `>`. */
const IN_PLACE = new Set(['sed', 'gsed', 'perl']);

export const FILESYSTEM_RULES: ShellRule[] = [
  {
    id: 'shell.filesystem.rm_root',
    severity: 'catastrophic',
    commands: RM,
    reason: 'Recursive delete of the filesystem root.',
    suggestion: 'Delete the specific files or folders inside the workspace that you mean.',
    match: (c) => has(c, '', '--no-preserve-root') || (recursiveRm(c) && targets(c, 'root')),
  },
  {
    id: 'shell.filesystem.rm_system',
    severity: 'catastrophic',
    commands: RM,
    reason: 'Recursive delete of a system directory (such as /etc, /usr, /var, /home).',
    suggestion: 'Never delete system directories; remove only files you created inside the workspace.',
    match: (c) => recursiveRm(c) && targets(c, 'system'),
  },
  {
    id: 'shell.filesystem.rm_home',
    severity: 'catastrophic',
    commands: RM,
    reason: 'Recursive delete of a home directory (~, $HOME or /home/<user>).',
    suggestion: 'Name the specific subfolder to delete, inside the workspace.',
    match: (c) => recursiveRm(c) && targets(c, 'home'),
  },
  {
    id: 'shell.filesystem.rm_cwd',
    severity: 'destructive',
    commands: RM,
    reason: 'Recursive delete of the current or a parent directory (., .., *).',
    suggestion: 'Delete named subfolders (for example rm -r build/) rather than everything here.',
    match: (c) => recursiveRm(c) && targets(c, 'cwd'),
  },
  {
    id: 'shell.filesystem.rm_absolute',
    severity: 'destructive',
    commands: RM,
    reason: 'Recursive delete of an absolute path outside the temporary directory.',
    suggestion: 'Use a path relative to the workspace, or confirm the path with ls first.',
    match: (c) => recursiveRm(c) && targets(c, 'absolute'),
  },
  {
    id: 'shell.filesystem.rm_dynamic_target',
    severity: 'destructive',
    commands: RM,
    reason:
      'Recursive delete of a path built from a variable or substitution; if it is empty the delete hits / or the current directory.',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax, not a template
    suggestion: 'Spell the path out, or guard it: rm -r -- "${DIR:?}/build".',
    match: (c) => recursiveRm(c) && targets(c, 'dynamic'),
  },
  {
    id: 'shell.filesystem.rm_recursive_xargs',
    severity: 'destructive',
    commands: RM,
    reason:
      'Recursive delete of paths read from stdin (xargs), or of every file a find lists: the targets cannot be checked.',
    suggestion: 'List the paths first, then delete them by name.',
    // `find ... | xargs rm` deletes a whole tree even without -r.
    match: (c) => c.viaXargs && (recursiveRm(c) || (c.stage > 0 && c.pipeline[c.stage - 1]!.name === 'find')),
  },
  {
    id: 'shell.filesystem.rm_git_dir',
    severity: 'destructive',
    commands: RM,
    reason: 'Deletes a .git directory: the repository’s whole history and unpushed work.',
    suggestion: 'Leave .git alone; use git commands to change the repository.',
    match: (c) => recursiveRm(c) && flags(c).positionals.some((p) => /(^|\/)\.git\/?$/.test(p)),
  },
  {
    id: 'shell.filesystem.rm_recursive',
    severity: 'destructive',
    commands: RM,
    reason: 'Recursive delete of a folder: everything under it goes, with no way back.',
    suggestion: 'Delete the specific files you mean, or ask for high trust to remove whole folders.',
    match: recursiveRm,
  },
  {
    id: 'shell.filesystem.read_secrets',
    severity: 'destructive',
    reason: 'Reads or copies a credential file (SSH keys, cloud credentials, .env, /etc/shadow...).',
    suggestion: 'Leave secrets where they are; tools that need them get them from configuration.',
    // Paths normalised (`/etc//shadow`, `/etc/./shadow`, `a/../.env`), globs by what they can match
    // (`.en?`, `shado[w]`), option values (`--include=.env`, `if=/etc/shadow`) and find -name patterns.
    match: readsSecret,
  },
  {
    id: 'shell.filesystem.recursive_read_secrets',
    severity: 'destructive',
    reason:
      'Reads a whole tree that holds credential files (grep -r, rg, tar c, rsync -a, cp -r, find -exec over /, ~, /etc or above the workspace).',
    suggestion:
      'Search or copy the specific folder you need inside the workspace (for example grep -r TODO src).',
    match: (c) => recursiveSecretRead(c) !== null,
  },
  {
    id: 'shell.filesystem.write_startup_file',
    severity: 'destructive',
    reason: 'Writes a shell startup file or authorized_keys: code or access that persists across logins.',
    suggestion: 'Put environment setup in the workspace and source it explicitly.',
    match: (c) =>
      writtenFiles(c).some((t) => STARTUP_FILE.test(t)) ||
      (IN_PLACE.has(c.name) &&
        has(c, 'i', '--in-place') &&
        flags(c).positionals.some((t) => STARTUP_FILE.test(t))),
  },
  {
    id: 'shell.filesystem.find_delete_root',
    severity: 'catastrophic',
    commands: ['find'],
    reason: 'find deleting from the filesystem root, a system directory or a home directory.',
    suggestion: 'Start find inside the workspace, and run it without -delete first to see what matches.',
    match: (c) => {
      const deletes =
        c.args.includes('-delete') ||
        c.args.some(
          (a, i) =>
            /^-(exec|execdir|ok|okdir)$/.test(a) && /(^|\/)(rm|shred|unlink)$/.test(c.args[i + 1] ?? ''),
        );
      if (!deletes) return false;
      const start = c.args.filter(
        (a, i) => !a.startsWith('-') && (i === 0 || !c.args[i - 1]!.startsWith('-')),
      );
      return targetsIn(c, start, 'root', 'system', 'home');
    },
  },
  {
    id: 'shell.filesystem.chmod_recursive_root',
    severity: 'catastrophic',
    commands: OWNERSHIP,
    reason: 'Recursive permission or ownership change on /, a system directory or a home directory.',
    suggestion: 'Change permissions only on the specific files in the workspace that need it.',
    match: (c) => has(c, 'R', '--recursive') && targets(c, 'root', 'system', 'home'),
  },
  {
    id: 'shell.filesystem.chmod_world_writable',
    severity: 'risky',
    commands: ['chmod'],
    reason: 'Makes files writable (or everything) for every user.',
    suggestion: 'Use the narrowest mode that works, such as 644 for files and 755 for directories.',
    // Numeric modes whose "other" digit has the write bit (777, 666, 0757); o+w, a+w, o=rw.
    match: (c) =>
      flags(c).positionals.some(
        (m) => /^[0-7]{2,3}[2367]$/.test(m) || /(^|,)[ugo]*[oa][ugoa]*[+=][rwxXst]*w/.test(m),
      ),
  },
  {
    id: 'shell.filesystem.chmod_setuid',
    severity: 'risky',
    commands: ['chmod'],
    reason: 'Sets the setuid or setgid bit, letting a program run with its owner’s rights.',
    suggestion: 'Do not grant setuid; run the program with the rights it needs.',
    // Four-digit modes whose first digit has the 4 (setuid) or 2 (setgid) bit; or u+s / g+s.
    match: (c) =>
      flags(c).positionals.some((m) => /^0?[2-7][0-7]{3}$/.test(m) || /^[ugoa]*\+[rwxXt]*s/.test(m)),
  },
  {
    id: 'shell.filesystem.mkfs',
    severity: 'catastrophic',
    reason: 'Formats or wipes a filesystem or swap area.',
    suggestion: 'Formatting disks is not something an agent should do; ask an operator.',
    match: (c) => /^(mkfs(\..+)?|mke2fs|mkswap|wipefs|mkdosfs|mkntfs|newfs(_.+)?)$/.test(c.name),
  },
  {
    id: 'shell.filesystem.partition',
    severity: 'destructive',
    commands: ['fdisk', 'sfdisk', 'cfdisk', 'gdisk', 'sgdisk', 'parted', 'diskutil'],
    reason: 'Changes a disk’s partition table.',
    suggestion: 'Use read-only listing (fdisk -l, parted -l, lsblk) to inspect disks.',
    match: (c) =>
      !(has(c, 'l', '--list') || (c.name === 'diskutil' && /^(list|info)$/.test(c.args[0] ?? ''))),
  },
  {
    id: 'shell.filesystem.dd_device',
    severity: 'catastrophic',
    commands: ['dd'],
    reason: 'dd writing straight to a disk device destroys its contents.',
    suggestion: 'Write to a regular file inside the workspace (of=./image.bin).',
    match: (c) => c.args.some((a) => a.startsWith('of=') && isDevice(a.slice(3))),
  },
  {
    id: 'shell.filesystem.write_device',
    severity: 'catastrophic',
    reason: 'Writes straight to a disk device (> /dev/sda, cp x /dev/nvme0n1), destroying its contents.',
    suggestion: 'Write to a regular file inside the workspace.',
    match: (c) => writtenFiles(c).some(isDevice),
  },
  {
    id: 'shell.filesystem.shred',
    severity: 'destructive',
    commands: ['shred', 'srm', 'wipe', 'scrub'],
    reason: 'Securely erases files: there is no way to recover them.',
    suggestion: 'Use rm on the specific files if they must go; keep a backup.',
    match: () => true,
  },
  {
    id: 'shell.filesystem.mv_system',
    severity: 'catastrophic',
    commands: ['mv'],
    reason: 'Moves the filesystem root, a system directory or a home directory away.',
    suggestion: 'Move only files inside the workspace.',
    match: (c) => {
      const p = flags(c).positionals;
      return p.length > 1 && targetsIn(c, p.slice(0, -1), 'root', 'system', 'home');
    },
  },
  {
    id: 'shell.filesystem.mv_to_dev_null',
    severity: 'destructive',
    commands: ['mv'],
    reason: 'Moving files onto /dev/null deletes them.',
    suggestion: 'Use rm on the specific files instead, so the intent is clear.',
    match: (c) => writtenPaths(c).includes('/dev/null'),
  },
  {
    id: 'shell.filesystem.write_system_file',
    severity: 'destructive',
    reason: 'Writes into a system location (/etc, /usr, /boot, /bin, /sbin, /lib).',
    suggestion: 'Write inside the workspace; system configuration is for an operator.',
    match: (c) => writtenFiles(c).some(isSystemPath),
  },
  {
    id: 'shell.filesystem.edit_system_file',
    severity: 'destructive',
    commands: ['sed', 'perl'],
    reason: 'Edits a system file in place.',
    suggestion: 'Edit a copy inside the workspace.',
    match: (c) => has(c, 'i', '--in-place') && flags(c).positionals.some(isSystemPath),
  },
];
