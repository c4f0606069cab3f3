/** What a listener call's thread produced, as the MCP server gives it back: bounded both ways. */
import { describe, expect, it } from 'vitest';
import type { MessageView } from '../../src/bus/message.ts';
import { producedText, threadProduced } from '../../src/mcp/server/produced.ts';

const message = (from: string, to: string, payload: string): MessageView => ({
  id: `${from}-${to}-${payload.length}`,
  from,
  to,
  kind: 'message',
  payload,
  time: new Date(0).toISOString(),
});

describe('threadProduced', () => {
  it("starts after the caller's message and keeps the last messages, saying how many it left out", () => {
    const thread = [
      message('mcp', 'a', '<a/>'),
      ...Array.from({ length: 5 }, (_, i) => message('a', 'b', `<n>${i}</n>`)),
    ];
    const produced = threadProduced(thread, 'mcp', { messages: 2, payloadChars: 100 });
    expect(produced.omitted).toBe(3);
    expect(produced.messages.map((m) => m.payload)).toEqual(['<n>3</n>', '<n>4</n>']);
    expect(producedText('a', produced)).toBe(
      'the thread ended without a reply from a; what it sent:\n(3 earlier messages left out)\na -> b: <n>3</n>\na -> b: <n>4</n>',
    );
  });

  it('cuts a long payload and says by how much', () => {
    const produced = threadProduced([message('mcp', 'a', '<a/>'), message('a', 'b', 'x'.repeat(30))], 'mcp', {
      messages: 5,
      payloadChars: 10,
    });
    expect(produced.messages[0]?.payload).toBe(`${'x'.repeat(10)}… (20 more characters)`);
  });

  it('says so when nothing was sent on', () => {
    const produced = threadProduced([message('mcp', 'a', '<a/>')], 'mcp');
    expect(produced).toEqual({ messages: [], omitted: 0 });
    expect(producedText('a', produced)).toBe('the thread ended without a reply from a; nothing was sent on');
  });
});
