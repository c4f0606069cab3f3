/** Containers and clusters: force-removing containers, pruning volumes, deleting cluster objects. */
import type { Cmd } from '../cmd.ts';
import { parseFlags, positionals, type ShellRule } from '../match.ts';

const DOCKER = ['docker', 'podman', 'nerdctl'];
const DOCKER_GLOBAL_WITH_VALUE = new Set([
  '-H',
  '--host',
  '-c',
  '--context',
  '--config',
  '-l',
  '--log-level',
  '--tlscacert',
  '--tlscert',
  '--tlskey',
  '--url',
  '--connection',
  '--remote',
  '--namespace',
  '-n',
]);
const KUBECTL_GLOBAL_WITH_VALUE = new Set([
  '-n',
  '--namespace',
  '--context',
  '--kubeconfig',
  '-s',
  '--server',
  '--cluster',
  '--user',
  '--token',
  '-l',
  '--selector',
  '-f',
  '--filename',
  '-o',
  '--output',
]);

/** `docker [globals] container rm -f x` -> ['container', 'rm', 'x'] plus the flags of everything. */
function docker(c: Cmd) {
  return { pos: positionals(c.args, DOCKER_GLOBAL_WITH_VALUE), f: parseFlags(c.args) };
}

/** The docker subcommand, with the management-command form folded in: `container rm` -> `rm`. */
function dockerVerb(pos: string[]): { group: string; verb: string } {
  const [a = '', b = ''] = pos;
  if (
    [
      'container',
      'image',
      'volume',
      'network',
      'system',
      'builder',
      'buildx',
      'compose',
      'pod',
      'manifest',
    ].includes(a)
  ) {
    return { group: a, verb: b };
  }
  return { group: '', verb: a };
}

function dockerMatch(
  test: (group: string, verb: string, f: ReturnType<typeof parseFlags>, c: Cmd) => boolean,
) {
  return (c: Cmd) => {
    const { pos, f } = docker(c);
    const { group, verb } = dockerVerb(pos);
    return test(group, verb, f, c);
  };
}

export const CONTAINER_RULES: ShellRule[] = [
  {
    id: 'shell.containers.docker_rm_force',
    severity: 'destructive',
    commands: DOCKER,
    reason: 'Force-removes containers, running ones included, with their unsaved state.',
    suggestion: 'Stop the container first (docker stop), then remove it without -f.',
    match: dockerMatch(
      (g, v, f) =>
        (g === '' || g === 'container') &&
        (v === 'rm' || v === 'remove') &&
        (f.short.has('f') || f.long.has('--force')),
    ),
  },
  {
    id: 'shell.containers.docker_prune',
    severity: 'destructive',
    commands: DOCKER,
    reason: 'Prunes containers, images, volumes or networks in bulk, including data other projects use.',
    suggestion: 'Remove the specific containers or images you created, by name.',
    match: dockerMatch((_g, v) => v === 'prune'),
  },
  {
    id: 'shell.containers.docker_volume_rm',
    severity: 'destructive',
    commands: DOCKER,
    reason: 'Removes a volume and the data in it.',
    suggestion: 'Back the volume up first, or leave it in place.',
    match: dockerMatch((g, v) => g === 'volume' && (v === 'rm' || v === 'remove')),
  },
  {
    id: 'shell.containers.compose_down_volumes',
    severity: 'destructive',
    commands: [...DOCKER, 'docker-compose', 'podman-compose'],
    reason: 'compose down -v also deletes the project’s volumes and their data.',
    suggestion: 'Use compose down without -v to keep the data.',
    match: (c) => {
      const pos = positionals(c.args, DOCKER_GLOBAL_WITH_VALUE);
      const down = c.name.endsWith('-compose')
        ? pos[0] === 'down'
        : pos[0] === 'compose' && pos[1] === 'down';
      const f = parseFlags(c.args);
      return down && (f.short.has('v') || f.long.has('--volumes'));
    },
  },
  {
    id: 'shell.containers.docker_rmi_force',
    severity: 'risky',
    commands: DOCKER,
    reason: 'Force-removes images, even ones containers still use.',
    suggestion: 'Remove unused images by name without -f.',
    match: dockerMatch(
      (g, v, f) =>
        (v === 'rmi' || (g === 'image' && (v === 'rm' || v === 'remove'))) &&
        (f.short.has('f') || f.long.has('--force')),
    ),
  },
  {
    id: 'shell.containers.docker_privileged',
    severity: 'risky',
    commands: DOCKER,
    reason: 'Starts a container with host-level access (--privileged, host PID/network, or / mounted).',
    suggestion: 'Grant only the capabilities and mounts the container needs.',
    match: dockerMatch((g, v, f, c) => {
      if (!((g === '' || g === 'container') && (v === 'run' || v === 'create'))) return false;
      if (f.long.has('--privileged')) return true;
      return c.args.some(
        (a, i) =>
          /^--(pid|network|net|ipc|userns)=host$/.test(a) ||
          (/^(-v|--volume)$/.test(a) && /^\/(:|$)/.test(c.args[i + 1] ?? '')) ||
          /^--volume=\/:/.test(a),
      );
    }),
  },
  {
    id: 'shell.containers.kubectl_delete',
    severity: 'destructive',
    commands: ['kubectl', 'oc', 'k3s'],
    reason: 'Deletes Kubernetes resources (and with them their pods, services or data).',
    suggestion: 'Scale down or apply a changed manifest; delete only through reviewed deploys.',
    match: (c) => {
      const pos = positionals(c.args, KUBECTL_GLOBAL_WITH_VALUE);
      const verb = c.name === 'k3s' ? pos[1] : pos[0];
      return verb === 'delete' || (verb === 'replace' && parseFlags(c.args).long.has('--force'));
    },
  },
  {
    id: 'shell.containers.kubectl_drain',
    severity: 'risky',
    commands: ['kubectl', 'oc'],
    reason: 'Drains or cordons a node, evicting its workloads.',
    suggestion: 'Leave node maintenance to the cluster operator.',
    match: (c) =>
      ['drain', 'cordon', 'taint'].includes(positionals(c.args, KUBECTL_GLOBAL_WITH_VALUE)[0] ?? ''),
  },
  {
    id: 'shell.containers.helm_uninstall',
    severity: 'destructive',
    commands: ['helm'],
    reason: 'Uninstalls a Helm release and the resources it created.',
    suggestion: 'Upgrade or roll back the release instead.',
    match: (c) =>
      ['uninstall', 'delete', 'del', 'un'].includes(positionals(c.args, KUBECTL_GLOBAL_WITH_VALUE)[0] ?? ''),
  },
];
