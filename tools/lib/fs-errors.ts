/** File-system errors in words an agent can act on, with the path as the caller wrote it. */
import { FileToolError } from '../../src/errors.ts';

export function fsError(error: unknown, shownPath: string, action: string): FileToolError {
  if (error instanceof FileToolError) return error;
  const e = error as NodeJS.ErrnoException;
  const at = JSON.stringify(shownPath);
  switch (e?.code) {
    case 'ENOENT':
      return new FileToolError('file.not_found', `${at} does not exist (cannot ${action})`, {
        path: shownPath,
      });
    case 'EISDIR':
      return new FileToolError('file.is_directory', `${at} is a directory, not a file (cannot ${action})`, {
        path: shownPath,
      });
    case 'ENOTDIR':
      return new FileToolError(
        'file.not_directory',
        `a part of ${at} is a file where a directory was expected (cannot ${action})`,
        { path: shownPath },
      );
    case 'EACCES':
    case 'EPERM':
      return new FileToolError('file.permission_denied', `permission denied: cannot ${action} ${at}`, {
        path: shownPath,
      });
    case 'ELOOP':
      // Also what O_NOFOLLOW says when a link replaced the file or folder after the path was checked.
      return new FileToolError(
        'file.path_refused',
        `${at} leads through a symbolic link that loops, or that replaced a file or folder while it was being opened`,
        {
          path: shownPath,
          rule_id: 'file.symlink_loop',
        },
      );
    case 'ENOSPC':
    case 'EDQUOT':
      return new FileToolError(
        'file.io',
        `no space left to ${action} ${at}: the workspace is full (its size bound, organism.workspace_max_bytes, or the disk it is on)`,
        { path: shownPath },
      );
    case 'ABORT_ERR':
      return new FileToolError('file.aborted', `cancelled while trying to ${action} ${at}`, {
        path: shownPath,
      });
    default:
      return new FileToolError(
        'file.io',
        `cannot ${action} ${at}: ${e?.code ?? (e as Error)?.message ?? 'error'}`,
        {
          path: shownPath,
        },
      );
  }
}
