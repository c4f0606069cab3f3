/** Cloud CLIs and infrastructure as code: deleting buckets, instances, projects, whole stacks. */
import type { Cmd } from '../cmd.ts';
import { parseFlags, positionals, type ShellRule } from '../match.ts';

const AWS_GLOBAL_WITH_VALUE = new Set([
  '--region',
  '--profile',
  '--output',
  '--endpoint-url',
  '--query',
  '--color',
  '--cli-read-timeout',
  '--cli-connect-timeout',
  '--ca-bundle',
  '--cli-binary-format',
]);
const NONE = new Set<string>();

function aws(c: Cmd): { service: string; op: string; f: ReturnType<typeof parseFlags> } {
  const [service = '', op = ''] = positionals(c.args, AWS_GLOBAL_WITH_VALUE);
  return { service, op, f: parseFlags(c.args) };
}

/** Positional words of a CLI whose commands are `noun [noun...] verb` (gcloud, az, doctl). */
function verbs(c: Cmd, n = 6): string[] {
  return positionals(c.args, NONE).slice(0, n);
}

export const CLOUD_RULES: ShellRule[] = [
  {
    id: 'shell.cloud.aws_s3_rm_recursive',
    severity: 'destructive',
    commands: ['aws'],
    reason: 'Deletes every object under an S3 prefix (or a whole bucket).',
    suggestion: 'Delete specific objects by key, or use lifecycle rules; check with aws s3 ls first.',
    match: (c) => {
      const { service, op, f } = aws(c);
      return (
        service === 's3' &&
        ((op === 'rm' && f.long.has('--recursive')) || (op === 'rb' && f.long.has('--force')))
      );
    },
  },
  {
    id: 'shell.cloud.aws_s3_sync_delete',
    severity: 'risky',
    commands: ['aws'],
    reason: 'aws s3 sync --delete removes destination objects that are missing from the source.',
    suggestion: 'Run with --dryrun first, or sync without --delete.',
    match: (c) => {
      const { service, op, f } = aws(c);
      return service === 's3' && op === 'sync' && f.long.has('--delete') && !f.long.has('--dryrun');
    },
  },
  {
    id: 'shell.cloud.aws_delete',
    severity: 'destructive',
    commands: ['aws'],
    reason: 'Deletes or terminates AWS resources (instances, databases, stacks, buckets...).',
    suggestion: 'Make infrastructure changes through reviewed infrastructure code, not ad hoc CLI calls.',
    match: (c) => {
      const { service, op, f } = aws(c);
      if (f.long.has('--dry-run')) return false;
      return (
        (service === 's3api' && op === 'delete-bucket') ||
        /^(delete|terminate|remove|deregister|purge|destroy)-/.test(op)
      );
    },
  },
  {
    id: 'shell.cloud.gcloud_delete',
    severity: 'destructive',
    commands: ['gcloud'],
    reason: 'Deletes Google Cloud resources (instances, projects, buckets...).',
    suggestion: 'Make infrastructure changes through reviewed infrastructure code, not ad hoc CLI calls.',
    match: (c) => verbs(c).some((v) => v === 'delete' || v === 'rm' || v === 'destroy'),
  },
  {
    id: 'shell.cloud.gsutil_rm',
    severity: 'destructive',
    commands: ['gsutil'],
    reason: 'Deletes Cloud Storage objects recursively, or a whole bucket.',
    suggestion: 'Delete specific objects; check with gsutil ls first.',
    match: (c) => {
      const v = positionals(c.args, NONE);
      const f = parseFlags(c.args);
      return v[0] === 'rb' || (v[0] === 'rm' && (f.short.has('r') || f.short.has('R') || f.short.has('a')));
    },
  },
  {
    id: 'shell.cloud.az_delete',
    severity: 'destructive',
    commands: ['az'],
    reason: 'Deletes Azure resources (resource groups, VMs, storage...).',
    suggestion: 'Make infrastructure changes through reviewed infrastructure code, not ad hoc CLI calls.',
    match: (c) => verbs(c).some((v) => v === 'delete' || v === 'purge'),
  },
  {
    id: 'shell.cloud.cli_delete',
    severity: 'destructive',
    commands: [
      'doctl',
      'hcloud',
      'linode-cli',
      'oci',
      'ibmcloud',
      'heroku',
      'flyctl',
      'fly',
      'vercel',
      'netlify',
      'scw',
      'exo',
    ],
    reason: 'Deletes or destroys cloud resources.',
    suggestion: 'Make infrastructure changes through reviewed infrastructure code, not ad hoc CLI calls.',
    match: (c) => verbs(c).some((v) => /^(delete|destroy|rm|remove|terminate)$|:destroy$/.test(v)),
  },
  {
    id: 'shell.cloud.terraform_destroy',
    severity: 'destructive',
    commands: ['terraform', 'tofu', 'terragrunt'],
    reason: 'Destroys every resource the configuration manages.',
    suggestion: 'Run terraform plan -destroy to review it, and leave the destroy to an operator.',
    match: (c) => {
      const v = positionals(c.args, NONE);
      return (
        v[0] === 'destroy' ||
        (v[0] === 'apply' && c.args.includes('-destroy')) ||
        (v[0] === 'state' && v[1] === 'rm')
      );
    },
  },
  {
    id: 'shell.cloud.terraform_auto_approve',
    severity: 'risky',
    commands: ['terraform', 'tofu', 'terragrunt'],
    reason: 'Applies infrastructure changes without showing the plan for approval.',
    suggestion: 'Run terraform plan and review it before applying.',
    match: (c) =>
      positionals(c.args, NONE)[0] === 'apply' &&
      c.args.some((a) => a === '-auto-approve' || a === '--auto-approve'),
  },
  {
    id: 'shell.cloud.pulumi_destroy',
    severity: 'destructive',
    commands: ['pulumi', 'cdk', 'sam', 'serverless', 'sls'],
    reason: 'Destroys a whole stack and its resources.',
    suggestion: 'Preview the change (pulumi preview --diff) and leave the destroy to an operator.',
    match: (c) => {
      const v = positionals(c.args, NONE);
      return (
        v[0] === 'destroy' || v[0] === 'delete' || v[0] === 'remove' || (v[0] === 'stack' && v[1] === 'rm')
      );
    },
  },
];
