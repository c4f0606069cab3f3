/**
 * Large request bodies take turns on the event loop, with the loop's I/O polled between turns.
 *
 * Decoding, JSON-parsing and XML-parsing a 1 MB body costs milliseconds each (and its garbage),
 * all synchronous. Sixteen such bodies that finish arriving together were handled in one poll
 * phase, one after the other, and every other request (/healthz, a small inject) waited for all of
 * them: seconds, with the old unbounded element parse. Here each step of a large body (its decode,
 * its JSON parse, the parse of the payload it carries) gets a loop iteration of its own: the
 * synchronous work after the turn is granted (and its microtasks) runs to the end, then the loop
 * polls I/O before the next turn, so a small request waits for at most one step of one body.
 */

/** Bodies (and payloads) past this size take turns; smaller ones cost well under a millisecond. */
export const LARGE_BODY_BYTES = 64 * 1024;

const waiting: Array<() => void> = [];
let scheduled = false;

/**
 * Resolves when it is this caller's turn: the work the caller does synchronously (and in the
 * microtasks that follow) after it resolves runs before the next turn is granted.
 */
export function largeBodyTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(grant);
    }
  });
}

function grant(): void {
  waiting.shift()?.();
  // An immediate queued from inside an immediate runs on the next loop iteration, after the poll
  // phase: the I/O that arrived meanwhile is handled between two large bodies.
  if (waiting.length > 0) setImmediate(grant);
  else scheduled = false;
}
