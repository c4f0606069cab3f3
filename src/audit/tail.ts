/** Reading the parts of an append-only JSON-lines file the writers need: its last lines, a range. */
import type { FileHandle } from 'node:fs/promises';

/** The last `count` complete lines of the first `size` bytes (fewer when the file has fewer), oldest first. */
export async function lastLines(handle: FileHandle, size: number, count: number): Promise<string[]> {
  if (size === 0) return [];
  let window = 64 * 1024;
  for (;;) {
    const start = Math.max(0, size - window);
    let text = (await readRange(handle, start, size)).toString('utf8');
    if (text.endsWith('\n')) text = text.slice(0, -1);
    const lines = text.split('\n');
    // The first piece may be a line cut by the window's start: only whole when the window is the file.
    if (lines.length > count || start === 0) {
      if (start === 0 && text === '') return [];
      const whole = start === 0 ? lines : lines.slice(1);
      return whole.slice(Math.max(0, whole.length - count));
    }
    window *= 4;
  }
}

/** The last complete line of the first `size` bytes, or undefined when there are none. */
export async function lastLine(handle: FileHandle, size: number): Promise<string | undefined> {
  return (await lastLines(handle, size, 1))[0];
}

/** Bytes [start, end) of the file. */
export async function readRange(handle: FileHandle, start: number, end: number): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.max(0, end - start));
  for (let done = 0; done < buffer.length; ) {
    const { bytesRead } = await handle.read(buffer, done, buffer.length - done, start + done);
    if (bytesRead === 0) return buffer.subarray(0, done);
    done += bytesRead;
  }
  return buffer;
}

export async function endsWithNewline(handle: FileHandle, size: number): Promise<boolean> {
  const byte = await readRange(handle, size - 1, size);
  return byte[0] === 0x0a;
}
