/**
 * The last hop of webhook and send_email, replaced for tests: the real tool runs (arguments, guard,
 * approval, once-only, body encoding, Idempotency-Key, the response cut at max_bytes, header checks,
 * recipient limits) and hands its request to a recorder instead of the network. Nothing is sent
 * anywhere, loopback included; a test that wants a real receiver names the tool in `live`.
 *
 * The recorders take the place of the tools' resources (tools/lib/net-request.ts
 * WEBHOOK_DELIVERY_RESOURCE, tools/lib/mail-transport.ts SMTP_RESOURCE) in the test's own resource
 * cache, before any call: the daemon's cache never has them.
 */
import type { MailAddress } from '../../tools/lib/mail-headers.ts';
import { type Delivery, type GuardedRequest, parseHttpUrl } from '../../tools/lib/net-request.ts';
import { NetworkError } from '../errors.ts';

/** One webhook delivery as the receiver would have got it. */
export interface RecordedWebhook {
  url: string;
  method: string;
  /** The request headers as sent, names lower-case (content-type, idempotency-key, user-agent...). */
  headers: Record<string, string>;
  /** The `payload` argument, as the receiver parses the body. */
  payload: unknown;
  /** The body as sent: the payload's JSON text. */
  body: string;
}

/** What the receiver answers: status 200 and an empty body unless the test says otherwise. */
export interface WebhookAnswer {
  /** HTTP status, 100 to 599. Default 200. */
  status?: number;
  /** The response body: a string as it is, anything else as JSON. Default empty. */
  body?: unknown;
}

export type WebhookResponder =
  | WebhookAnswer
  | ((request: RecordedWebhook) => WebhookAnswer | Promise<WebhookAnswer>);

/** The deliveries so far, in order, and how the receiver answers the next ones. */
export type WebhookRecorder = readonly RecordedWebhook[] & {
  /** Sets the answer of the deliveries that follow: one answer, or a function of each request. */
  respond(answer: WebhookResponder): void;
};

/** One e-mail as the SMTP server would have got it. */
export interface RecordedEmail {
  /** smtp.from's address. */
  from: string;
  /** Addresses, display names left out. */
  to: string[];
  cc: string[];
  reply_to?: string;
  subject: string;
  /** The body of a plain-text mail. */
  text?: string;
  /** The body of an HTML mail (html: true). */
  html?: string;
  message_id: string;
}

export type EmailRecorder = readonly RecordedEmail[];

/** A method on a recorded list that toEqual() and friends do not see. */
function withMethod<T extends object, K extends string, F>(target: T, name: K, fn: F): T & Record<K, F> {
  Object.defineProperty(target, name, { value: fn, enumerable: false });
  return target as T & Record<K, F>;
}

function checkAnswer(
  answer: unknown,
  where: string,
): Required<Pick<WebhookAnswer, 'status'>> & WebhookAnswer {
  if (answer === null || typeof answer !== 'object') {
    throw new TypeError(
      `${where}: the answer must be an object { status?, body? }, not ${JSON.stringify(answer)}`,
    );
  }
  const { status = 200, body } = answer as WebhookAnswer;
  if (!Number.isInteger(status) || status < 100 || status > 599) {
    throw new TypeError(
      `${where}: status must be a whole number from 100 to 599, not ${JSON.stringify(status)}`,
    );
  }
  return { status, body };
}

/** A webhook recorder, and the delivery the tool calls in its place. */
export function webhookRecorder(): { recorder: WebhookRecorder; delivery: Delivery } {
  const requests: RecordedWebhook[] = [];
  let responder: WebhookResponder = {};
  const recorder = withMethod(requests, 'respond', (answer: WebhookResponder) => {
    if (typeof answer !== 'function') checkAnswer(answer, 'webhooks.respond()');
    responder = answer;
  });
  const delivery: Delivery = async (req: GuardedRequest, opts) => {
    opts.signal.throwIfAborted();
    parseHttpUrl(req.url); // what the network path refuses before it connects, refused here too
    const body = req.body === undefined ? '' : Buffer.from(req.body).toString('utf8');
    let payload: unknown;
    try {
      payload = JSON.parse(body);
    } catch {
      payload = body;
    }
    const request: RecordedWebhook = {
      url: req.url,
      method: req.method,
      headers: { ...req.headers },
      payload,
      body,
    };
    requests.push(request);
    let answer: ReturnType<typeof checkAnswer>;
    try {
      answer = checkAnswer(
        typeof responder === 'function' ? await responder(structuredClone(request)) : responder,
        'the answer of webhooks.respond()',
      );
    } catch (error) {
      // The test's own answer is broken: the call fails saying so, as a receiver that cannot answer.
      throw new NetworkError('net.failed', `the test's webhook receiver failed: ${(error as Error).message}`);
    }
    const text =
      answer.body === undefined
        ? ''
        : typeof answer.body === 'string'
          ? answer.body
          : JSON.stringify(answer.body);
    const bytes = Buffer.from(text, 'utf8');
    const truncated = bytes.length > opts.maxBytes;
    return {
      status: answer.status,
      headers: {
        'content-type': typeof answer.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
      },
      bytes: truncated ? bytes.subarray(0, opts.maxBytes) : bytes,
      truncated,
      url: req.url,
      redirects: [],
      warnings: [],
    };
  };
  return { recorder, delivery };
}

/** What send_email hands its transport (nodemailer's message fields it uses). */
interface Mail {
  from: MailAddress;
  to: MailAddress[];
  cc?: MailAddress[];
  replyTo?: MailAddress;
  subject: string;
  text?: string;
  html?: string;
  messageId: string;
}

/** An e-mail recorder, and the transport send_email finds in its place (nodemailer's shape). */
export function emailRecorder(): {
  recorder: EmailRecorder;
  transport: { sendMail(mail: Mail): Promise<unknown>; close(): void };
} {
  const mails: RecordedEmail[] = [];
  const transport = {
    async sendMail(mail: Mail) {
      const to = mail.to.map((a) => a.address);
      const cc = (mail.cc ?? []).map((a) => a.address);
      mails.push({
        from: mail.from.address,
        to,
        cc,
        ...(mail.replyTo ? { reply_to: mail.replyTo.address } : {}),
        subject: mail.subject,
        ...(mail.html === undefined ? {} : { html: mail.html }),
        ...(mail.text === undefined ? {} : { text: mail.text }),
        message_id: mail.messageId,
      });
      return { messageId: mail.messageId, accepted: [...to, ...cc], rejected: [] };
    },
    close() {},
  };
  return { recorder: mails, transport };
}
