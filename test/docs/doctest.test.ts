/**
 * The docs run (test/helpers/doctest/suite.ts): every block of README.md and docs/guide/*.md in one
 * `organism init` project. One shard while the suite runs its files one at a time (vitest's default
 * on two cores): each shard installs a project of its own, about a minute. With files run side by
 * side, three files each calling describeDocShard({ shard: i, of: 3 }) take a third of the time.
 *
 * One page alone: `npx vitest run test/docs/doctest.test.ts -t docs/guide/tools.md` (the project is
 * still installed first, about a minute).
 */
import { describeDocShard } from '../helpers/doctest/suite.ts';

await describeDocShard({ shard: 0, of: 1, runnerChecks: true });
