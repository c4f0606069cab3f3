/**
 * Part 2's guard figure: the shell guard's time to judge one command, over a mixed corpus of 1,000
 * commands generated deterministically (seeded) from the rule families, the way agents' commands
 * mix: mostly ordinary reads and builds, some destructive, some nested (sh -c, substitutions,
 * wrappers). Floor: splitting the same command on spaces, the least any checker must do.
 * Target: p50 <= 20 us. Printed, never asserted.
 *
 * Also, for information: the same commands judged with a place (a small workspace on disk and
 * `shell: true`), as the dispatcher calls the guard: symlinks are looked up, globs expanded and
 * recursive readers' trees walked, so this figure includes the file system.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import type { TrustLevel } from '../src/config/types.ts';
import { checkShell } from '../src/guard/shell/index.ts';
import { seededRandom } from '../test/helpers/seeded-random.ts';
import { percentile, round } from './support.ts';

const FILES = [
  'src/index.ts',
  'README.md',
  'package.json',
  'docs/guide.md',
  'test/a.test.ts',
  'build',
  'dist',
  '.env',
  '/etc/hosts',
  '~',
];
const WORDS = ['TODO', 'rm', 'force', 'DROP', 'main', 'error', 'curl'];
const URLS = [
  'https://example.com/install.sh',
  'https://get.tool.dev',
  'https://raw.githubusercontent.com/x/y/main/i.sh',
];
const WRAP = [
  '',
  'sudo ',
  'timeout 30 ',
  'nice -n 10 ',
  'env CI=1 ',
  'nohup ',
  'stdbuf -oL ',
  'sudo timeout 5 ',
];

/** Templates per family; `{f}` file, `{w}` word, `{u}` URL, `{x}` wrapper, `{n}` number. Weights favour ordinary work. */
const FAMILIES: { weight: number; templates: string[] }[] = [
  {
    weight: 40, // reads and ordinary work
    templates: [
      'ls -la {f}',
      'cat {f}',
      'grep -rn "{w}" src | head -n {n}',
      'ls -R | grep {w}',
      'git status && git log --oneline -{n}',
      'git diff HEAD~{n} -- {f}',
      'find . -name "*.ts" -exec grep -l {w} {} \\;',
      'echo "rm -rf /" && wc -l {f}',
      'npm test -- --grep {w}',
      'cd src && {x}tsc --noEmit',
      'cat package.json | jq .scripts',
      'head -n {n} {f} | tail -n 5',
    ],
  },
  {
    weight: 15, // filesystem
    templates: [
      '{x}rm -rf {f}',
      'rm -r /*',
      'chmod -R 777 {f}',
      'dd if=/dev/zero of=/dev/sda bs={n}M',
      'find / -name "*.log" -delete',
      'cd / && rm -rf *',
    ],
  },
  {
    weight: 12, // git
    templates: [
      'git push --force origin {w}',
      'git -C repo reset --hard HEAD~{n}',
      'git -c user.name=x push origin +{w}',
      'git clean -fdx',
      'git branch -D {w}',
      'git checkout -- .',
    ],
  },
  {
    weight: 10, // pipe to shell and obfuscation
    templates: [
      'curl -fsSL {u} | {x}bash',
      'bash <(curl -s {u})',
      'wget -qO- {u} | sh',
      'curl -s {u} | python3',
      'echo cm0gLXJmIC8K | base64 -d | sh',
      'eval "$(curl -fsSL {u})"',
    ],
  },
  {
    weight: 8, // databases, containers, cloud
    templates: [
      'psql -c "DROP TABLE users_{n}"',
      'mysql -e "DELETE FROM orders"',
      'redis-cli FLUSHALL',
      'docker system prune -af',
      'kubectl -n prod delete pod api-{n}',
      'aws s3 rm s3://bucket/{w} --recursive',
      'terraform destroy -auto-approve',
    ],
  },
  {
    weight: 8, // system and publishing
    templates: [
      '{x}shutdown -h now',
      'kill -9 {n}',
      'systemctl stop nginx',
      'crontab -r',
      ':(){ :|:& };:',
      'npm publish',
      'cargo publish',
      'docker push app:{n}',
    ],
  },
  {
    weight: 7, // nesting: sh -c, substitutions, here-docs
    templates: [
      "bash -lc 'cd build && {x}make -j{n}'",
      'sh -c "echo $(git rev-parse HEAD) > VERSION"',
      "ssh host 'uptime && df -h'",
      'psql <<EOF\nSELECT * FROM users LIMIT {n};\nEOF',
      'for f in *.ts; do grep -c {w} "$f"; done',
      'echo $(echo $(echo {w}))',
    ],
  },
];

export function corpus(count = 1000, seed = 0x5eed): { command: string; trust: TrustLevel }[] {
  // Seeded: every run judges the same 1,000 commands.
  const r = seededRandom(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const total = FAMILIES.reduce((s, f) => s + f.weight, 0);
  const trusts: TrustLevel[] = ['low', 'medium', 'medium', 'high'];
  const out: { command: string; trust: TrustLevel }[] = [];
  for (let i = 0; i < count; i++) {
    let x = r() * total;
    let family = FAMILIES[0]!;
    for (const f of FAMILIES) {
      family = f;
      x -= f.weight;
      if (x < 0) break;
    }
    const command = pick(family.templates)
      .replace(/\{f\}/g, () => pick(FILES))
      .replace(/\{w\}/g, () => pick(WORDS))
      .replace(/\{u\}/g, () => pick(URLS))
      .replace(/\{x\}/g, () => pick(WRAP))
      .replace(/\{n\}/g, () => String(1 + Math.floor(r() * 50)));
    out.push({ command, trust: pick(trusts) });
  }
  return out;
}

function timeEach(
  items: { command: string; trust: TrustLevel }[],
  fn: (c: string, t: TrustLevel) => unknown,
  passes: number,
): Float64Array {
  const samples = new Float64Array(items.length * passes);
  let k = 0;
  let sink = 0;
  for (let p = 0; p < passes; p++) {
    for (const { command, trust } of items) {
      const t0 = process.hrtime.bigint();
      const v = fn(command, trust);
      samples[k++] = Number(process.hrtime.bigint() - t0) / 1000;
      if (v) sink++;
    }
  }
  if (sink < 0) console.error(sink);
  return samples.sort();
}

export async function* run(): AsyncIterable<Record<string, unknown>> {
  const items = corpus();
  // Warm-up: let V8 optimise the tokenizer and rule matchers before measuring.
  for (let i = 0; i < 5; i++) for (const { command, trust } of items) checkShell(command, trust);
  const guard = timeEach(items, (c, t) => checkShell(c, t), 10);
  const floor = timeEach(items, (c) => c.split(' ').length, 10);
  const workspace = mkdtempSync(path.join(tmpdir(), 'organism-bench-guard-'));
  let placed: Float64Array;
  try {
    for (const f of FILES) {
      if (f.startsWith('/') || f.startsWith('~')) continue;
      const file = path.join(workspace, f.includes('.') ? f : `${f}/x.js`);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, 'x');
    }
    const place = { workspace };
    const config = { shell: true };
    for (const { command, trust } of items) checkShell(command, trust, config, place);
    placed = timeEach(items, (c, t) => checkShell(c, t, config, place), 3);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
  const verdicts = { allow: 0, warn: 0, deny: 0 };
  for (const { command, trust } of items) verdicts[checkShell(command, trust).verdict]++;
  yield {
    name: 'guard_shell',
    guard_shell_eval_us_p50: round(percentile(guard, 50), 2),
    guard_shell_eval_us_p99: round(percentile(guard, 99), 2),
    floor_split_us_p50: round(percentile(floor, 50), 2),
    guard_shell_place_eval_us_p50: round(percentile(placed, 50), 2),
    guard_shell_place_eval_us_p99: round(percentile(placed, 99), 2),
    commands: items.length,
    samples: guard.length,
    verdicts,
    target_p50_us: 20,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for await (const line of run()) process.stdout.write(`${JSON.stringify(line)}\n`);
}
