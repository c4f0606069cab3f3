/** Package publishing: pushing a release to a public registry cannot be taken back. */
import type { Cmd } from '../cmd.ts';
import { positionals, type ShellRule } from '../match.ts';

const NONE = new Set<string>();
const NPM_WITH_VALUE = new Set([
  '--registry',
  '--prefix',
  '-C',
  '--dir',
  '--userconfig',
  '--cache',
  '-w',
  '--workspace',
  '--filter',
  '--otp',
]);

const verb = (c: Cmd, withValue: ReadonlySet<string> = NONE) => positionals(c.args, withValue);

export const PUBLISH_RULES: ShellRule[] = [
  {
    id: 'shell.publish.npm',
    severity: 'destructive',
    commands: ['npm', 'pnpm', 'yarn', 'bun'],
    reason: 'Publishes (or unpublishes) a package on the npm registry; a published version cannot be reused.',
    suggestion: 'Leave releases to the release process; use npm pack or --dry-run to check the package.',
    match: (c) => {
      if (c.args.includes('--dry-run')) return false;
      const v = verb(c, NPM_WITH_VALUE);
      return /^(publish|unpublish|pub|deprecate)$/.test(v[0] ?? '') || (v[0] === 'npm' && v[1] === 'publish');
    },
  },
  {
    id: 'shell.publish.cargo',
    severity: 'destructive',
    commands: ['cargo'],
    reason: 'Publishes (or yanks) a crate on crates.io; a published version is permanent.',
    suggestion: 'Leave releases to the release process; use cargo publish --dry-run to check.',
    match: (c) => !c.args.includes('--dry-run') && /^(publish|yank|owner)$/.test(verb(c)[0] ?? ''),
  },
  {
    id: 'shell.publish.pypi',
    severity: 'destructive',
    commands: ['twine', 'uv', 'poetry', 'flit', 'hatch', 'pdm', 'python', 'python3'],
    reason: 'Uploads a package to PyPI; a published version cannot be replaced.',
    suggestion: 'Leave releases to the release process; upload to TestPyPI to try it out.',
    match: (c) => {
      const v = verb(c);
      if (c.name === 'twine') return v[0] === 'upload';
      if (c.name === 'python' || c.name === 'python3')
        return c.args[0] === '-m' && c.args[1] === 'twine' && c.args[2] === 'upload';
      return v[0] === 'publish';
    },
  },
  {
    id: 'shell.publish.gem',
    severity: 'destructive',
    commands: ['gem'],
    reason: 'Pushes (or yanks) a gem on rubygems.org.',
    suggestion: 'Leave releases to the release process.',
    match: (c) => /^(push|yank|owner)$/.test(verb(c)[0] ?? ''),
  },
  {
    id: 'shell.publish.docker_push',
    severity: 'destructive',
    commands: ['docker', 'podman', 'nerdctl', 'buildah', 'skopeo'],
    reason: 'Pushes an image to a registry, possibly overwriting a tag others pull.',
    suggestion: 'Leave image releases to the CI pipeline; build locally to test.',
    match: (c) => {
      const v = verb(c, new Set(['-H', '--host', '--context', '-c', '--config']));
      return (
        v[0] === 'push' ||
        (v[0] === 'image' && v[1] === 'push') ||
        (c.name === 'skopeo' && v[0] === 'copy') ||
        (v[0] === 'buildx' && v[1] === 'build' && c.args.includes('--push'))
      );
    },
  },
  {
    id: 'shell.publish.other',
    severity: 'destructive',
    commands: [
      'mvn',
      'gradle',
      'gradlew',
      'dotnet',
      'nuget',
      'helm',
      'vsce',
      'ovsx',
      'pod',
      'gh',
      'goreleaser',
      'swift',
      'mix',
      'dart',
      'flutter',
      'composer',
    ],
    reason: 'Publishes a release or package to a public registry.',
    suggestion: 'Leave releases to the release process.',
    match: (c) => {
      const v = verb(c);
      switch (c.name) {
        case 'mvn':
          return v.includes('deploy') || v.includes('release:perform');
        case 'gradle':
        case 'gradlew':
          return v.some(
            (t) =>
              /^(publish|publishToMavenCentral|publishPlugins|uploadArchives)/.test(t) &&
              !/MavenLocal$/.test(t),
          );
        case 'dotnet':
          return v[0] === 'nuget' && v[1] === 'push';
        case 'nuget':
        case 'helm':
          return v[0] === 'push';
        case 'vsce':
        case 'ovsx':
          return v[0] === 'publish';
        case 'pod':
          return v[0] === 'trunk' && v[1] === 'push';
        case 'gh':
          return v[0] === 'release' && (v[1] === 'create' || v[1] === 'delete');
        case 'goreleaser':
          return (v[0] ?? 'release') === 'release' && !c.args.includes('--snapshot');
        case 'swift':
          return v[0] === 'package-registry' && v[1] === 'publish';
        case 'mix':
          return v[0] === 'hex.publish';
        case 'dart':
        case 'flutter':
          return v[0] === 'pub' && v[1] === 'publish' && !c.args.includes('--dry-run');
        default:
          return false;
      }
    },
  },
];
