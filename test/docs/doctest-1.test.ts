/**
 * The docs run (test/helpers/doctest/suite.ts), shard 1 of 3: every third page of README.md and
 * docs/guide/*.md in an `organism init` project of this file's own (about a minute to install). The
 * suite runs two files at a time, so three shards take about a third of one file's four minutes.
 *
 * One page alone: `npx vitest run test/docs/doctest -t docs/guide/tools.md`.
 */
import { describeDocShard } from '../helpers/doctest/suite.ts';

await describeDocShard({ shard: 0, of: 3, runnerChecks: true });
