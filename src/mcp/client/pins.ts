/**
 * Integrity of MCP tools. `organism tools sign` pins each server's tool list in the signed manifest
 * (member `mcp`: server -> tool -> SHA-256 of the canonical JSON of its name, description, input
 * schema and annotations). A server whose tool no longer matches its pin (a "rug pull": a new
 * description telling the model to do something else) has that tool refused until it is signed
 * again. The pins are signed with the rest of the manifest (the signature covers every member).
 */
import { createHash, type KeyObject, sign as signBytes, verify as verifyBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { canonicalJson } from '../../tools/canonical.ts';
import type { Manifest } from '../../tools/integrity.ts';
import type { RemoteTool } from './connection.ts';

export type McpPins = Record<string, Record<string, string>>;

/** A listed tool's pin, computed once per listing (each call checks it twice). */
const computed = new WeakMap<RemoteTool, string>();

export function pinOf(tool: RemoteTool): string {
  const known = computed.get(tool);
  if (known !== undefined) return known;
  const pin = hashTool(tool);
  computed.set(tool, pin);
  return pin;
}

function hashTool(tool: RemoteTool): string {
  const pinned = {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    annotations: tool.annotations ?? null,
  };
  return createHash('sha256').update(canonicalJson(pinned)).digest('hex');
}

function signedPart(manifest: Record<string, unknown>): string {
  const { signature: _ignored, ...rest } = manifest;
  return canonicalJson(rest);
}

/** The manifest with the servers' pins added, signed again with the same key. */
export function withMcpPins(
  manifest: Manifest,
  pins: McpPins,
  privateKey: KeyObject,
): Manifest & { mcp: McpPins } {
  const { signature: _old, ...rest } = manifest;
  const unsigned = { ...rest, mcp: pins };
  const signature = signBytes(null, Buffer.from(signedPart(unsigned), 'utf8'), privateKey).toString('base64');
  return { ...unsigned, signature };
}

/**
 * What the runtime checks MCP tools against: `unsigned` (no manifest: nothing pinned, nothing
 * refused, as with native tools), the verified pins, or why the manifest cannot be trusted.
 */
export type PinState =
  | { kind: 'unsigned' }
  | { kind: 'pinned'; pins: McpPins }
  | { kind: 'broken'; reason: string };

export function loadPins(manifestPath: string, publicKey: KeyObject | undefined): PinState {
  let text: string;
  try {
    text = readFileSync(manifestPath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'unsigned' };
    return { kind: 'broken', reason: `cannot read tool manifest ${manifestPath}` };
  }
  let manifest: Record<string, unknown>;
  try {
    manifest = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { kind: 'broken', reason: `tool manifest ${manifestPath} is not JSON` };
  }
  if (!publicKey)
    return {
      kind: 'broken',
      reason: `tool manifest ${manifestPath} is present but no public key is configured`,
    };
  const good =
    typeof manifest.signature === 'string' &&
    verifyBytes(
      null,
      Buffer.from(signedPart(manifest), 'utf8'),
      publicKey,
      Buffer.from(manifest.signature, 'base64'),
    );
  if (!good) return { kind: 'broken', reason: `tool manifest ${manifestPath} has a bad signature` };
  const pins = (manifest.mcp ?? {}) as McpPins;
  return { kind: 'pinned', pins };
}

/**
 * How often, at most, the manifest file is looked at again (ms). A stat per call was a sixth of
 * the runtime's share of an MCP call (bench mcp); a re-sign needs only to apply without a restart.
 */
export const PIN_RECHECK_MS = 100;

/**
 * The pins in force, read again when the manifest file changes (its stat looked at no more often
 * than every PIN_RECHECK_MS): re-signing makes a refused tool usable again without a restart, and
 * a manifest changed by anyone without the key is broken for every MCP tool just as soon.
 */
export function watchedPins(
  manifestPath: string,
  publicKey: KeyObject | undefined,
  now: () => number = performance.now.bind(performance),
): () => PinState {
  let stamp = '';
  let state: PinState = { kind: 'unsigned' };
  let lookedAt = Number.NEGATIVE_INFINITY;
  return () => {
    const time = now();
    if (time - lookedAt < PIN_RECHECK_MS) return state;
    lookedAt = time;
    let seen: string;
    try {
      const info = statSync(manifestPath);
      seen = `${info.mtimeMs}:${info.size}:${info.ino}`;
    } catch {
      seen = 'absent';
    }
    if (seen !== stamp) {
      stamp = seen;
      state = loadPins(manifestPath, publicKey);
    }
    return state;
  };
}

/** Why `tool` of `server` fails its pin, or null when it matches (or nothing is signed). */
export function pinProblem(state: PinState, server: string, tool: RemoteTool): string | null {
  if (state.kind === 'unsigned') return null;
  if (state.kind === 'broken') return state.reason;
  const pinned = state.pins[server]?.[tool.name];
  if (pinned === undefined)
    return `tool ${tool.name} of MCP server ${server} is not in the signed manifest; run 'organism tools sign'`;
  if (pinned !== pinOf(tool))
    return `tool ${tool.name} of MCP server ${server} changed since it was signed (its name, description, schema or annotations); check it, then run 'organism tools sign'`;
  return null;
}
