import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { type OptimizeFor, v8FlagsFor } from '../../src/daemon/v8-flags.ts';

describe('v8FlagsFor (organism.optimize_for)', () => {
  it('favours memory with a later tier-up, in the terms of each V8', () => {
    // Node 20's V8 counts bytecode (--interrupt-budget); 11.8 and later count calls per tier.
    expect(v8FlagsFor('memory', '11.3.244.8')).toEqual([
      '--semi-space-growth-factor=1',
      '--optimize-for-size',
      '--interrupt-budget=540672',
    ]);
    expect(v8FlagsFor('memory', '13.6.233.10')).toEqual([
      '--semi-space-growth-factor=1',
      '--optimize-for-size',
      '--invocation-count-for-maglev=3200',
      '--invocation-count-for-turbofan=24000',
    ]);
  });

  it("gives speed V8's own defaults back, keeping the young generation small", () => {
    expect(v8FlagsFor('speed', '11.3.244.8')).toEqual([
      '--semi-space-growth-factor=1',
      '--no-optimize-for-size',
      '--interrupt-budget=67584',
    ]);
    expect(v8FlagsFor('speed', '12.4.254.21')).toEqual([
      '--semi-space-growth-factor=1',
      '--no-optimize-for-size',
      '--invocation-count-for-maglev=400',
      '--invocation-count-for-turbofan=3000',
    ]);
  });

  it.each<OptimizeFor>(['memory', 'speed'])(
    '%s: every flag is one this Node knows (no error line at start)',
    (target) => {
      // V8 prints "Error: unrecognized flag" on stderr for a flag it does not know, and goes on.
      const child = spawnSync(
        process.execPath,
        [
          '-e',
          "for (const f of JSON.parse(process.argv[1])) require('node:v8').setFlagsFromString(f)",
          JSON.stringify(v8FlagsFor(target)),
        ],
        { encoding: 'utf8' },
      );
      expect(child.stderr).toBe('');
      expect(child.status).toBe(0);
    },
  );
});
