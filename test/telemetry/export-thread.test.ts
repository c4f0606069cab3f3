/**
 * Hop batches go to the collector from a thread of their own (src/telemetry/export-thread.ts): a
 * batch is posted while the daemon's thread is busy, the batch's buffer is handed over and comes
 * back, and a batch that cannot be posted is reported failed, with why. The collector is a real
 * HTTP server on 127.0.0.1 in a process of its own (the test blocks its own thread), which prints
 * when each request arrived.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { ExportResult } from '@opentelemetry/core';
import { ExportResultCode } from '@opentelemetry/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ExportThread } from '../../src/telemetry/export-thread.ts';
import type { HopChunk } from '../../src/telemetry/hop-batch.ts';
import { freePort } from '../helpers/ports.ts';

/** Prints `<epoch ms> <bytes>` for each request once its body is in; answers 200, or `status`. */
const COLLECTOR = `
const http = require('node:http');
const status = Number(process.argv[1] ?? 200);
http.createServer((req, res) => {
  let bytes = 0;
  req.on('data', (chunk) => { bytes += chunk.length; });
  req.on('end', () => {
    process.stdout.write(Date.now() + ' ' + bytes + '\\n');
    res.writeHead(status, { 'content-type': 'application/x-protobuf' });
    res.end();
  });
}).listen(0, '127.0.0.1', function () { process.stdout.write('port ' + this.address().port + '\\n'); });
`;

interface Collector {
  url: string;
  /** Arrival time and size of each request so far. */
  arrivals: Array<{ at: number; bytes: number }>;
  child: ChildProcess;
}

let collector: Collector | undefined;
let thread: ExportThread | undefined;
afterEach(async () => {
  await thread?.close();
  collector?.child.kill();
  thread = undefined;
  collector = undefined;
});

async function startCollector(status = 200): Promise<Collector> {
  const child = spawn(process.execPath, ['-e', COLLECTOR, String(status)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const arrivals: Collector['arrivals'] = [];
  const port = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const lines = text.split('\n');
      text = lines.pop()!;
      for (const line of lines) {
        const [a, b] = line.split(' ');
        if (a === 'port') resolve(b!);
        else arrivals.push({ at: Number(a), bytes: Number(b) });
      }
    });
    child.once('exit', (code) => reject(new Error(`the collector exited ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/v1/traces`, arrivals, child };
}

/** A batch of `length` bytes at `offset` of a buffer of its own, as HopBatch fills one. */
function batch(length: number, offset = 16): { chunk: HopChunk; buffer: Buffer } {
  const buffer = Buffer.allocUnsafeSlow(offset + length + 64);
  for (let i = 0; i < buffer.length; i++) buffer[i] = i & 0xff;
  return { chunk: { bytes: buffer.subarray(offset, offset + length), count: 3 }, buffer };
}

function sent(
  t: ExportThread,
  chunk: HopChunk,
  buffer: Buffer,
): Promise<{ result: ExportResult; buffer: Buffer | undefined }> {
  return new Promise((resolve, reject) => {
    const posted = t.send(chunk, buffer, (result, back) => resolve({ result, buffer: back }));
    if (!posted) reject(new Error('the export thread did not take the batch'));
  });
}

describe('the export thread', { timeout: 30_000 }, () => {
  it('posts a batch while the daemon’s thread is busy, and hands the buffer back', async () => {
    collector = await startCollector();
    thread = new ExportThread({ url: collector.url, headers: {}, timeoutMs: 5_000 });
    expect(await thread.start()).toBe(true);
    const { chunk, buffer } = batch(200_000);
    const expected = Buffer.from(chunk.bytes);
    const answer = sent(thread, chunk, buffer);
    // Handed over, not copied: the buffer is no longer this thread's.
    expect(buffer.buffer.byteLength).toBe(0);
    // This thread does nothing but wait for 1.5 s: an export made from it could not go meanwhile.
    const busyUntil = Date.now() + 1_500;
    while (Date.now() < busyUntil);
    const { result, buffer: back } = await answer;
    expect(result.code).toBe(ExportResultCode.SUCCESS);
    // The collector's line about it may come a moment after the answer.
    await vi.waitFor(() => expect(collector!.arrivals).toHaveLength(1));
    expect(collector.arrivals[0]!.bytes).toBe(200_000);
    expect(collector.arrivals[0]!.at).toBeLessThan(busyUntil);
    // The same memory, to fill again: the batch's bytes where they were.
    expect(back!.length).toBe(16 + 200_000 + 64);
    expect(Buffer.compare(back!.subarray(16, 16 + 200_000), expected)).toBe(0);
  });

  it('copies a batch whose buffer shares its memory (the sender keeps it intact)', async () => {
    collector = await startCollector();
    thread = new ExportThread({ url: collector.url, headers: {}, timeoutMs: 5_000 });
    expect(await thread.start()).toBe(true);
    const whole = Buffer.alloc(4_096, 7);
    const buffer = whole.subarray(1_024, 3_072);
    const { result } = await sent(thread, { bytes: buffer.subarray(0, 1_000), count: 1 }, buffer);
    expect(result.code).toBe(ExportResultCode.SUCCESS);
    expect(whole.buffer.byteLength).toBeGreaterThanOrEqual(4_096);
    expect(whole.every((b) => b === 7)).toBe(true);
    await vi.waitFor(() => expect(collector!.arrivals.map((a) => a.bytes)).toEqual([1_000]));
  });

  it('reports a batch the collector refused, or that it could not reach, as failed with why', async () => {
    collector = await startCollector(400);
    thread = new ExportThread({ url: collector.url, headers: {}, timeoutMs: 2_000 });
    expect(await thread.start()).toBe(true);
    const first = batch(100);
    const refused = await sent(thread, first.chunk, first.buffer);
    expect(refused.result.code).toBe(ExportResultCode.FAILED);
    expect(refused.result.error?.message).toMatch(/400|Bad Request/);
    await thread.close();
    const port = await freePort();
    thread = new ExportThread({ url: `http://127.0.0.1:${port}/v1/traces`, headers: {}, timeoutMs: 2_000 });
    expect(await thread.start()).toBe(true);
    const { chunk, buffer } = batch(100);
    const unreachable = await sent(thread, chunk, buffer);
    expect(unreachable.result.code).toBe(ExportResultCode.FAILED);
    expect(unreachable.result.error?.message).toMatch(/ECONNREFUSED/);
  });

  it('fails the batches on their way when it is stopped, and takes none after', async () => {
    collector = await startCollector();
    thread = new ExportThread({ url: collector.url, headers: {}, timeoutMs: 5_000 });
    expect(await thread.start()).toBe(true);
    // The collector stops reading: the batch stays on its way.
    collector.child.kill('SIGSTOP');
    const { chunk, buffer } = batch(1_000);
    const answer = sent(thread, chunk, buffer);
    await thread.close();
    const { result } = await answer;
    collector.child.kill('SIGCONT');
    expect(result.code).toBe(ExportResultCode.FAILED);
    expect(result.error?.message).toMatch(/stopped/);
    const next = batch(10);
    expect(thread.send(next.chunk, next.buffer, () => {})).toBe(false);
  });

  it('fails the batches of a thread that died, and starts another for the next batch', async () => {
    collector = await startCollector();
    thread = new ExportThread({ url: collector.url, headers: {}, timeoutMs: 5_000 });
    expect(await thread.start()).toBe(true);
    // A batch whose bytes are not where the buffer says (offset past its end) throws in the
    // thread, which dies of it: what it had is failed, with why.
    const wrong = batch(1_000, 2_000);
    const { result } = await sent(thread, wrong.chunk, Buffer.allocUnsafeSlow(1_500));
    expect(result.code).toBe(ExportResultCode.FAILED);
    expect(result.error?.message).toMatch(/the export thread stopped/);
    // The next batch is the caller's to send (none is ready), and starts another thread.
    const next = batch(100);
    expect(thread.send(next.chunk, next.buffer, () => {})).toBe(false);
    expect(await thread.start()).toBe(true);
    const again = batch(100);
    const { result: ok } = await sent(thread, again.chunk, again.buffer);
    expect(ok.code).toBe(ExportResultCode.SUCCESS);
    await vi.waitFor(() => expect(collector!.arrivals.map((a) => a.bytes)).toEqual([100]));
  });
});
