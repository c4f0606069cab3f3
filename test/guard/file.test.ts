import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPath } from '../../src/guard/file.ts';

let root: string;
let ws: string;
let outside: string;

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'organism-file-guard-')));
  ws = path.join(root, 'ws');
  outside = path.join(root, 'outside');
  await mkdir(path.join(ws, 'src'), { recursive: true });
  await mkdir(path.join(ws, '.git', 'hooks'), { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(path.join(ws, 'src', 'a.ts'), 'x');
  await writeFile(path.join(outside, 'secret.txt'), 'x');
  await symlink(outside, path.join(ws, 'escape'));
  await symlink(path.join(outside, 'secret.txt'), path.join(ws, 'file-link'));
  await symlink(path.join(outside, 'not-yet'), path.join(ws, 'dangling'));
  await symlink(path.join(ws, 'src'), path.join(ws, 'inner-link'));
  await symlink('../outside', path.join(ws, 'relative-escape'));
  await symlink('/etc/shadow', path.join(ws, 'shadow'));
  await symlink(path.join(ws, 'loop-b'), path.join(ws, 'loop-a'));
  await symlink(path.join(ws, 'loop-a'), path.join(ws, 'loop-b'));
  await symlink(outside, path.join(root, 'data-link'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const read = (p: string, extra: { allowedPaths?: string[]; trust?: 'low' | 'medium' | 'high' } = {}) =>
  checkPath(p, 'read', {
    workspace: ws,
    trust: extra.trust ?? 'medium',
    ...(extra.allowedPaths ? { allowedPaths: extra.allowedPaths } : {}),
  });
const write = (p: string, extra: { allowedPaths?: string[]; trust?: 'low' | 'medium' | 'high' } = {}) =>
  checkPath(p, 'write', {
    workspace: ws,
    trust: extra.trust ?? 'medium',
    ...(extra.allowedPaths ? { allowedPaths: extra.allowedPaths } : {}),
  });

describe('file guard: normalisation', () => {
  it('takes relative paths against the workspace and resolves ..', () => {
    expect(read('src/a.ts')).toMatchObject({ verdict: 'allow', resolved: path.join(ws, 'src/a.ts') });
    expect(read('./src/../src/./a.ts')).toMatchObject({
      verdict: 'allow',
      resolved: path.join(ws, 'src/a.ts'),
    });
    expect(write('new/dir/file.txt')).toMatchObject({
      verdict: 'allow',
      resolved: path.join(ws, 'new/dir/file.txt'),
    });
    expect(read('.')).toMatchObject({ verdict: 'allow', resolved: ws });
  });

  it('refuses .. that climbs out of the workspace', () => {
    expect(read('../outside/secret.txt')).toMatchObject({
      verdict: 'deny',
      rule_id: 'file.outside_workspace',
    });
    expect(read('src/../../outside')).toMatchObject({ verdict: 'deny', rule_id: 'file.outside_workspace' });
  });

  it('expands ~ to the home directory', () => {
    expect(read('~/.ssh/id_rsa')).toMatchObject({
      verdict: 'deny',
      rule_id: 'file.sensitive',
      resolved: path.join(homedir(), '.ssh/id_rsa'),
    });
    expect(read('~')).toMatchObject({ verdict: 'deny', resolved: homedir() });
    expect(read('~bob/x')).toMatchObject({ verdict: 'deny', rule_id: 'file.invalid_path' });
  });

  it('refuses empty paths and NUL bytes', () => {
    expect(read('')).toMatchObject({ verdict: 'deny', rule_id: 'file.invalid_path' });
    expect(read('a\0b')).toMatchObject({ verdict: 'deny', rule_id: 'file.invalid_path' });
  });
});

describe('file guard: symlinks', () => {
  it('follows a directory link that leads outside', () => {
    const v = read('escape/secret.txt');
    expect(v).toMatchObject({
      verdict: 'deny',
      rule_id: 'file.symlink_escape',
      resolved: path.join(outside, 'secret.txt'),
    });
    expect(write('escape/new.txt')).toMatchObject({ verdict: 'deny', rule_id: 'file.symlink_escape' });
    expect(read('relative-escape/secret.txt')).toMatchObject({
      verdict: 'deny',
      rule_id: 'file.symlink_escape',
    });
  });

  it('follows a file link that leads outside', () => {
    expect(read('file-link')).toMatchObject({
      verdict: 'deny',
      rule_id: 'file.symlink_escape',
      resolved: path.join(outside, 'secret.txt'),
    });
  });

  it('follows a dangling link to where a write would create the file', () => {
    expect(write('dangling')).toMatchObject({
      verdict: 'deny',
      rule_id: 'file.symlink_escape',
      resolved: path.join(outside, 'not-yet'),
    });
    expect(write('dangling/deeper/x')).toMatchObject({
      verdict: 'deny',
      resolved: path.join(outside, 'not-yet/deeper/x'),
    });
  });

  it('allows links that stay inside the workspace', () => {
    expect(read('inner-link/a.ts')).toMatchObject({ verdict: 'allow', resolved: path.join(ws, 'src/a.ts') });
  });

  it('checks the target of a link against the sensitive list', () => {
    expect(read('shadow')).toMatchObject({
      verdict: 'deny',
      rule_id: 'file.sensitive',
      resolved: '/etc/shadow',
    });
  });

  it('refuses link loops', () => {
    expect(read('loop-a/x')).toMatchObject({ verdict: 'deny', rule_id: 'file.invalid_path' });
  });

  it('resolves a workspace given through a link', () => {
    const v = checkPath('x/secret.txt', 'read', { workspace: path.join(root, 'data-link'), trust: 'medium' });
    expect(v).toMatchObject({ verdict: 'allow', resolved: path.join(outside, 'x/secret.txt') });
  });
});

describe('file guard: system and sensitive paths', () => {
  it.each(['/proc/self/environ', '/sys/kernel', '/dev/sda', '/proc'])('denies any access to %s', (p) => {
    expect(read(p)).toMatchObject({ verdict: 'deny', rule_id: 'file.system_path' });
  });

  it.each(['/etc/hosts', '/usr/bin/env', '/boot/vmlinuz', '/bin/sh', '/sbin/init', '/lib/x.so'])(
    'denies writes to %s',
    (p) => {
      expect(write(p)).toMatchObject({ verdict: 'deny', rule_id: 'file.system_write' });
    },
  );

  it('denies reads of system files as outside the workspace, not as system writes', () => {
    expect(read('/etc/hosts')).toMatchObject({ verdict: 'deny', rule_id: 'file.outside_workspace' });
  });

  it.each([
    '~/.ssh/config',
    '~/.gnupg/pubring.kbx',
    '~/.aws/credentials',
    '~/.config/gcloud/credentials.db',
    '~/.netrc',
    '~/.bashrc',
    '~/.zshrc',
    '~/.profile',
    '/etc/shadow',
    '/etc/sudoers',
    '/etc/sudoers.d/90-cloud',
    '/root/.ssh/authorized_keys',
  ])('denies %s as sensitive, read or write', (p) => {
    expect(read(p)).toMatchObject({ verdict: 'deny', rule_id: 'file.sensitive' });
    expect(write(p).verdict).toBe('deny');
  });

  it.each([
    '.env',
    'config/.env.local',
    'app/.env.production',
    'keys/id_ed25519',
    '.netrc',
    'deploy/.bashrc',
  ])('denies %s inside the workspace too', (p) => {
    expect(read(p)).toMatchObject({ verdict: 'deny', rule_id: 'file.sensitive' });
  });

  it.each(['.env.example', '.env.sample', 'keys/id_ed25519.pub', 'src/env.ts', '.envrc.md'])(
    'allows %s',
    (p) => {
      expect(read(p).verdict).toBe('allow');
    },
  );

  it('sensitive paths stay denied even when allowed_paths covers them', () => {
    expect(read('~/.ssh/id_rsa', { allowedPaths: ['~/**'] })).toMatchObject({
      verdict: 'deny',
      rule_id: 'file.sensitive',
    });
  });
});

describe('file guard: .git internals', () => {
  it('denies writes at every trust level', () => {
    for (const trust of ['low', 'medium', 'high'] as const) {
      expect(write('.git/hooks/pre-commit', { trust })).toMatchObject({
        verdict: 'deny',
        rule_id: 'file.git_internals',
      });
      expect(write('.git/objects/ab/cdef', { trust }).verdict).toBe('deny');
    }
  });

  it('denies reads at low and medium, warns at high, and always denies .git/config', () => {
    expect(read('.git/HEAD', { trust: 'low' }).verdict).toBe('deny');
    expect(read('.git/HEAD', { trust: 'medium' }).verdict).toBe('deny');
    expect(read('.git/HEAD', { trust: 'high' })).toMatchObject({
      verdict: 'warn',
      rule_id: 'file.git_internals',
    });
    expect(read('.git/config', { trust: 'high' })).toMatchObject({
      verdict: 'deny',
      rule_id: 'file.git_internals',
    });
    expect(read('.git', { trust: 'medium' }).verdict).toBe('deny');
  });

  it('does not confuse .gitignore or .github with .git', () => {
    expect(read('.gitignore').verdict).toBe('allow');
    expect(write('.github/workflows/ci.yml').verdict).toBe('allow');
  });
});

describe('file guard: allowed_paths', () => {
  it('allows outside paths that match a glob, and only those', () => {
    const allowedPaths = [`${outside}/**`];
    expect(read(path.join(outside, 'secret.txt'), { allowedPaths })).toMatchObject({ verdict: 'allow' });
    expect(read(outside, { allowedPaths }).verdict).toBe('allow');
    expect(read(path.join(root, 'elsewhere.txt'), { allowedPaths })).toMatchObject({
      verdict: 'deny',
      rule_id: 'file.allowed_paths',
    });
  });

  it('is the whole allowlist: workspace paths it does not name are refused', () => {
    expect(read('src/a.ts', { allowedPaths: [`${outside}/**`] })).toMatchObject({
      verdict: 'deny',
      rule_id: 'file.allowed_paths',
    });
    expect(read('src/a.ts', { allowedPaths: ['src/**'] }).verdict).toBe('allow');
    expect(write('docs/x.md', { allowedPaths: ['src/**'] }).verdict).toBe('deny');
  });

  it('lets a workspace link into an allowed place through', () => {
    expect(read('escape/secret.txt', { allowedPaths: [`${outside}/*.txt`] }).verdict).toBe('allow');
    expect(read('escape/secret.txt', { allowedPaths: [`${outside}/*.md`] }).verdict).toBe('deny');
  });

  it('matches the real path: an allowed directory reached through a link', () => {
    const viaLink = path.join(root, 'data-link');
    expect(read(path.join(viaLink, 'secret.txt'), { allowedPaths: [`${viaLink}/**`] }).verdict).toBe('allow');
  });

  it('does not let a link inside an allowed place lead elsewhere', async () => {
    await symlink('/etc', path.join(outside, 'etc-link'));
    expect(read(path.join(outside, 'etc-link/hostname'), { allowedPaths: [`${outside}/**`] })).toMatchObject({
      verdict: 'deny',
      rule_id: 'file.allowed_paths',
      resolved: '/etc/hostname',
    });
  });

  it('still refuses system writes in an allowed place', () => {
    expect(write('/etc/app.conf', { allowedPaths: ['/etc/**'] })).toMatchObject({
      verdict: 'deny',
      rule_id: 'file.system_write',
    });
  });
});

describe('file guard: the secret-file spellings of issue 14', () => {
  it('normalises //, /./, .. and trailing slashes before matching', () => {
    for (const p of [
      '/etc//shadow',
      '/etc/./shadow',
      '//etc/shadow',
      '/etc/../etc/shadow',
      '/etc/shadow/',
      '/etc///./shadow//',
    ]) {
      expect(read(p), p).toMatchObject({
        verdict: 'deny',
        rule_id: 'file.sensitive',
        resolved: '/etc/shadow',
      });
    }
    for (const p of ['.env', './.env', 'src/../.env', '.env/', 'src//..//.env', `${ws}//.env`]) {
      expect(read(p), p).toMatchObject({ verdict: 'deny', rule_id: 'file.sensitive' });
      expect(write(p), p).toMatchObject({ verdict: 'deny', rule_id: 'file.sensitive' });
    }
    expect(read('~/.ssh//id_rsa')).toMatchObject({ verdict: 'deny', rule_id: 'file.sensitive' });
    expect(read('../../.env')).toMatchObject({ verdict: 'deny', rule_id: 'file.sensitive' });
  });

  it('takes glob characters literally: the file tools never expand them', () => {
    // `.en?` is a file called `.en?`; only the shell expands globs (the shell guard judges those).
    expect(read('.en?')).toMatchObject({ verdict: 'allow', resolved: path.join(ws, '.en?') });
  });
});

describe('file guard: credential files of package managers and CLIs, like .env (issue 25)', () => {
  // Wherever they are: in the workspace (a project's own .npmrc), under the home folder, in another
  // user's home. Refused for read and write at every trust level, as .env is.
  const credentials = [
    '.npmrc',
    'packages/web/.npmrc',
    '.yarnrc',
    '.yarnrc.yml',
    '.pypirc',
    '.netrc',
    '_netrc',
    '.git-credentials',
    '.docker/config.json',
    '.kube/config',
    '.aws/credentials',
    '.aws/config',
    '.azure/accessTokens.json',
    '.azure/msal_token_cache.json',
    '.config/gcloud/credentials.db',
    '.config/gcloud/application_default_credentials.json',
    '.config/gcloud/access_tokens.db',
    '.config/gh/hosts.yml',
    '.terraform.d/credentials.tfrc.json',
    '.cargo/credentials',
    '.cargo/credentials.toml',
    '.gem/credentials',
    '.m2/settings.xml',
    '.m2/settings-security.xml',
    '.gradle/gradle.properties',
    '.pgpass',
    '.my.cnf',
    '.mylogin.cnf',
    '.dockercfg',
    '.vault-token',
    'kubeconfig',
    'keys/id_rsa',
    'keys/id_ed25519_work',
    'keys/id_ecdsa-deploy',
    '.NPMRC',
  ];

  it.each(credentials)('denies %s in the workspace, read and write, at every trust level', (p) => {
    for (const trust of ['low', 'medium', 'high'] as const) {
      expect(read(p, { trust }), `${p} ${trust}`).toMatchObject({
        verdict: 'deny',
        rule_id: 'file.sensitive',
      });
      expect(write(p, { trust }), `${p} ${trust}`).toMatchObject({
        verdict: 'deny',
        rule_id: 'file.sensitive',
      });
    }
  });

  it.each(credentials.filter((p) => !p.startsWith('keys/')))('denies %s under ~ and under /home/bob', (p) => {
    expect(read(`~/${p}`)).toMatchObject({ verdict: 'deny', rule_id: 'file.sensitive' });
    expect(read(`/home/bob/${p}`)).toMatchObject({ verdict: 'deny', rule_id: 'file.sensitive' });
  });

  it('denies listing the folders that are nothing but credentials', () => {
    for (const dir of ['.aws', '.azure', '.kube', '.config/gcloud', '.config/gh', '~/.azure', '~/.oci']) {
      expect(read(dir), dir).toMatchObject({ verdict: 'deny', rule_id: 'file.sensitive' });
    }
  });

  it('denies them through a link, and a link that would create one', async () => {
    await writeFile(path.join(outside, '.npmrc'), '//registry.example/:_authToken=x\n');
    await symlink(path.join(outside, '.npmrc'), path.join(ws, 'npm-settings'));
    expect(read('npm-settings')).toMatchObject({ verdict: 'deny', rule_id: 'file.sensitive' });
    await symlink(path.join(ws, '.pypirc'), path.join(ws, 'upload-settings'));
    expect(write('upload-settings')).toMatchObject({ verdict: 'deny', rule_id: 'file.sensitive' });
  });

  it.each([
    'keys/id_ed25519.pub',
    'keys/id_rsa_work.pub',
    'settings.xml',
    'config.json',
    'docs/npmrc.md',
    '.npmrc.md',
    'src/docker/config.json',
    'credentials.md',
    'id_map.json',
  ])('allows %s', (p) => {
    expect(read(p).verdict).toBe('allow');
  });
});
