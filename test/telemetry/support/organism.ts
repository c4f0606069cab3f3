/** organism.yaml for the tracing tests: the default organism's listeners by absolute path, plus `telemetry:`. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const LISTENERS = fileURLToPath(new URL('../../../listeners/', import.meta.url));

/** The default organism's greeter -> shouter -> printer, its toolbox and its scripted assistant (calculate). */
export const DEFAULT_LISTENERS = `listeners:
  - name: greeter
    handler: ${LISTENERS}greeter.ts
    peers: [shouter]
  - name: shouter
    handler: ${LISTENERS}shouter.ts
    peers: [printer]
  - name: printer
    handler: ${LISTENERS}printer.ts
  - name: toolbox
    handler: ${LISTENERS}toolbox.ts
    tools: [calculate, fetch_url]
  - name: assistant
    agent: true
    description: Answers questions, working out arithmetic with the calculate tool.
    prompt: You are a concise assistant.
    tools: [calculate]
    peers: [printer]
    max_turns: 6
llm:
  backends:
    - provider: scripted
      script: ${LISTENERS}assistant.script.yaml
`;

export interface TelemetryYaml {
  endpoint: string;
  captureContent?: boolean;
  maxQueueSize?: number;
  timeoutMs?: number;
  extra?: string;
}

export function telemetryYaml(t: TelemetryYaml): string {
  return `telemetry:
  service_name: tracing-test
  capture_content: ${t.captureContent ?? false}
  max_queue_size: ${t.maxQueueSize ?? 2048}
  export_delay_ms: 50
  otlp:
    endpoint: ${t.endpoint}
    timeout_ms: ${t.timeoutMs ?? 5000}
${t.extra ?? ''}`;
}

/** A temp folder holding organism.yaml; its data_dir is inside it. */
export async function organismFile(yaml: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-tracing-'));
  const file = join(dir, 'organism.yaml');
  await writeFile(file, `organism:\n  name: tracing-test\nserver:\n  host: 127.0.0.1\n${yaml}`);
  return file;
}
