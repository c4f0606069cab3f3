/**
 * What the file guard counts as a credential file, wherever it is (the workspace, a home folder,
 * /run): the stores package managers, CLIs and cloud SDKs keep, SSH keys, `.env` files, shell
 * startup files and the system's own secrets. The shell guard's SECRET_FILE (shell/paths.ts)
 * names the same files.
 */

/**
 * Credential stores that package managers, CLIs and cloud SDKs keep, as path segments matched
 * wherever they are (a project's own `.npmrc` holds a registry token as often as the one in the
 * home folder; another user's home, /root, a mounted home count too). `dir`: everything at or
 * under those segments; `file`: the path ends with them.
 */
const CREDENTIAL_PATHS: ReadonlyArray<{ segments: readonly string[]; kind: 'dir' | 'file' }> = [
  ...[
    '.ssh',
    '.gnupg',
    '.aws',
    '.azure',
    '.kube',
    '.oci',
    '.password-store',
    '.config/gcloud',
    '.config/gh',
    '.config/hub',
    '.config/op',
    '.config/doctl',
    '.config/hcloud',
    '.config/glab-cli',
    '.local/share/keyrings',
    '.docker',
  ].map((p) => ({ segments: p.split('/'), kind: 'dir' as const })),
  ...[
    '.docker/config.json',
    // podman, buildah, skopeo: ~/.config/containers, $XDG_RUNTIME_DIR/containers, /run/containers/0.
    'containers/auth.json',
    'containers/0/auth.json',
    '.config/helm/registry/config.json',
    '.config/helm/repositories.yaml',
    '.composer/auth.json',
    '.config/composer/auth.json',
    '.ivy2/.credentials',
    '.sbt/.credentials',
    '.fly/config.yml',
    'com.vercel.cli/auth.json',
    '.config/stripe/config.toml',
    '.gem/credentials',
    '.cargo/credentials',
    '.cargo/credentials.toml',
    '.terraform.d/credentials.tfrc.json',
    '.m2/settings.xml',
    '.m2/settings-security.xml',
    '.gradle/gradle.properties',
    '.config/git/credentials',
    '.config/rclone/rclone.conf',
    '.pulumi/credentials.json',
    '.huggingface/token',
    '.cache/huggingface/token',
  ].map((p) => ({ segments: p.split('/'), kind: 'file' as const })),
];
/**
 * File names that hold credentials (like `.env`) or run code at login, wherever they are;
 * compared in lower case, as a case-insensitive file system opens them.
 */
const SECRET_FILES = new Set([
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pypirc',
  '.netrc',
  '_netrc',
  '.git-credentials',
  '.gitcookies',
  '.pgpass',
  '.my.cnf',
  '.mylogin.cnf',
  '.dockercfg',
  '.vault-token',
  '.terraformrc',
  '.boto',
  '.s3cfg',
  '.databrickscfg',
  '.htpasswd',
  'kubeconfig',
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.bash_aliases',
  '.profile',
  '.zshrc',
  '.zprofile',
  '.zshenv',
  '.zlogin',
  '.zlogout',
  '.kshrc',
  '.mkshrc',
  '.cshrc',
  '.tcshrc',
  '.login',
  '.logout',
  'config.fish',
]);
/** SSH private keys by ssh-keygen's names, with any suffix (`id_ed25519_work`); never `.pub`. */
const SSH_KEY = /^id_(rsa|dsa|ecdsa|ed25519|xmss)(_sk)?([._-].*)?$/;
const SYSTEM_SECRETS =
  /^\/(private\/)?etc\/(shadow|gshadow|master\.passwd|sudoers|sudoers\.d|security\/opasswd|ssh\/ssh_host_[^/]*_key)(\/|$)/;
/** `.env`, `.env.local`, `.env.production`...; but templates are meant to be read. */
const DOTENV = /^\.env(\..+)?$/;
const DOTENV_TEMPLATE = /^\.env\.(example|sample|template|dist|defaults?)$/;

/** Why `p` is sensitive, or null. */
export function sensitive(p: string): string | null {
  if (SYSTEM_SECRETS.test(p)) return 'system credentials';
  const parts = p.split('/');
  const lower = parts.map((part) => part.toLowerCase());
  for (const { segments, kind } of CREDENTIAL_PATHS) {
    const last = lower.length - segments.length;
    for (let at = kind === 'file' ? last : 0; at <= last; at++) {
      if (segments.every((s, k) => lower[at + k] === s)) return segments.join('/');
    }
  }
  const base = lower[lower.length - 1] ?? '';
  if (SECRET_FILES.has(base)) return base;
  if (SSH_KEY.test(base) && !base.endsWith('.pub')) return 'SSH private key';
  if (DOTENV.test(parts[parts.length - 1] ?? '') && !DOTENV_TEMPLATE.test(parts[parts.length - 1] ?? ''))
    return 'environment file';
  return null;
}
