/**
 * webhook: delivers a JSON payload to a URL with POST or PUT, under the same web guard and pinned
 * connections as fetch_url. Each call carries `Idempotency-Key: <call id>`: if the runtime or a
 * network hiccup makes the same call arrive twice, the receiver can recognise and drop the repeat.
 */
import { NetworkError } from '../src/errors.ts';
import type { ToolDefinition, ToolRunContext } from '../src/tools/types.ts';
import { NET_DEFAULTS, netConfigSchema, requestOptions, urlArgSchema } from './lib/net-config.ts';
import { type Delivery, guardedRequest, WEBHOOK_DELIVERY_RESOURCE } from './lib/net-request.ts';

export interface WebhookArgs {
  url: string;
  payload: unknown;
  method?: 'POST' | 'PUT';
}

export interface WebhookResult {
  status_code: number;
  /** The receiver's response body as text, cut at tool_config max_bytes. */
  response: string;
  truncated: boolean;
}

export const MAX_PAYLOAD_BYTES = 1024 * 1024;

const webhook: ToolDefinition<WebhookArgs, WebhookResult> = {
  name: 'webhook',
  description:
    'Send a JSON payload to a webhook URL (POST by default, or PUT) to notify or trigger another ' +
    "service, and return the receiver's status_code and response text. Each call is delivered with " +
    'an Idempotency-Key header, so a receiver can ignore a repeated delivery of the same call. A ' +
    '4xx/5xx status is returned as a result, not an error; only 307/308 redirects are followed. ' +
    'Example: {"url": "https://hooks.example.com/build", "payload": {"event": "done", "id": 42}}.',
  args: {
    type: 'object',
    properties: {
      url: urlArgSchema('Absolute http:// or https:// URL of the receiver.'),
      payload: {
        description: 'Any JSON value; sent as the request body with Content-Type: application/json.',
      },
      method: { enum: ['POST', 'PUT'], default: 'POST', description: 'POST (default) or PUT.' },
    },
    required: ['url', 'payload'],
    additionalProperties: false,
  },
  readOnly: false,
  capability: 'post_webhook',
  source: 'native',
  guard: 'web',
  sideEffect: true,
  config: netConfigSchema(NET_DEFAULTS.webhookMaxBytes),
  async run(args: WebhookArgs, ctx: ToolRunContext): Promise<WebhookResult> {
    const method = args.method ?? 'POST';
    if (method !== 'POST' && method !== 'PUT') {
      throw new NetworkError('net.method_not_allowed', `method must be POST or PUT (got ${String(method)})`);
    }
    if (args.payload === undefined) throw new NetworkError('net.bad_body', "argument 'payload' is required");
    let text: string;
    try {
      text = JSON.stringify(args.payload);
    } catch (error) {
      throw new NetworkError('net.bad_body', `payload cannot be sent as JSON: ${(error as Error).message}`);
    }
    const body = Buffer.from(text, 'utf8');
    if (body.length > MAX_PAYLOAD_BYTES) {
      throw new NetworkError(
        'net.bad_body',
        `payload is ${body.length} bytes as JSON; the limit is ${MAX_PAYLOAD_BYTES}`,
      );
    }
    const deliver = await ctx.services.resources.get<Delivery>(
      WEBHOOK_DELIVERY_RESOURCE,
      () => guardedRequest,
    );
    const response = await deliver(
      {
        url: args.url,
        method,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/plain;q=0.9, */*;q=0.5',
          'idempotency-key': ctx.callId,
          'user-agent': 'Organism-webhook/0.1',
        },
        body,
      },
      await requestOptions(ctx, NET_DEFAULTS.webhookMaxBytes, 'same-method'),
    );
    return {
      status_code: response.status,
      response: new TextDecoder('utf-8').decode(response.bytes, { stream: response.truncated }),
      truncated: response.truncated,
    };
  },
};

export default webhook;
