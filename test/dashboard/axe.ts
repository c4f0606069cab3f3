/**
 * axe-core in the page under test. The dashboard's Content-Security-Policy refuses inline and added
 * scripts (page.addScriptTag is refused, which the browser test checks), and the policy is not
 * loosened for a test: axe's source is evaluated over the DevTools protocol (page.evaluate), which
 * the page's policy does not govern, the way an extension or a debugger would run it.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

export const AXE_PATH = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const AXE_SOURCE = readFileSync(AXE_PATH, 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

/**
 * axe's serious and critical violations on the page as it is now, one line each (rule, impact,
 * help, the elements), so a failing assertion says what to fix; and how many rules passed, so a
 * check that ran nothing is seen.
 */
export async function axeProblems(page: Page): Promise<{ problems: string[]; passed: number }> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const result = (await page.evaluate(async () => {
    const { axe } = window as unknown as { axe: { run: (c: Node, o: object) => Promise<unknown> } };
    return axe.run(document, { resultTypes: ['violations'] });
  })) as { violations: AxeViolation[]; passes: unknown[] };
  const problems = result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} at ${v.nodes
          .slice(0, 5)
          .map(
            (n) =>
              `${JSON.stringify(n.target)}${n.failureSummary ? ` [${n.failureSummary.replace(/\s+/g, ' ')}]` : ''}`,
          )
          .join('; ')}${v.nodes.length > 5 ? ` and ${v.nodes.length - 5} more` : ''}`,
    );
  return { problems, passed: result.passes.length };
}
