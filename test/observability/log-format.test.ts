/** Which form the daemon's log takes on stdout: pretty for a terminal, JSON lines for anything else. */
import { describe, expect, it } from 'vitest';
import { logFormat } from '../../src/observability/logger.ts';

describe('logFormat', () => {
  it('is pretty only when stdout is a terminal', () => {
    expect(logFormat({ isTTY: true })).toBe('pretty');
    expect(logFormat({ isTTY: false })).toBe('json');
    // A pipe or a file: Node leaves isTTY unset.
    expect(logFormat({})).toBe('json');
  });
});
