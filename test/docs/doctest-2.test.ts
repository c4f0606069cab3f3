/**
 * The docs run, shard 2 of 3 (test/helpers/doctest/suite.ts deals the pages; the three files run
 * side by side). One page alone: `npx vitest run test/docs/doctest -t docs/guide/tools.md` (the
 * shard holding it installs its project first, about a minute).
 */
import { describeDocShard } from '../helpers/doctest/suite.ts';

await describeDocShard({ shard: 1, of: 3, runnerChecks: true });
