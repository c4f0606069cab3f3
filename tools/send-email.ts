/**
 * send_email: sends one e-mail through the SMTP server in organism.yaml `smtp`. The email guard
 * judges each call first and the runtime rate-limits it; run() re-checks every header field for
 * CR/LF itself (defence in depth) and sends through nodemailer.
 */
import { MailError } from '../src/errors.ts';
import type { ToolConfig, ToolDefinition } from '../src/tools/types.ts';
import { abortable } from './lib/abortable.ts';
import { checkHeaderText, type MailAddress, parseAddress, parseAddressList } from './lib/mail-headers.ts';
import { mailFailure, mailTransport, smtpSettings, smtpUnavailable } from './lib/mail-transport.ts';

export interface SendEmailArgs {
  to: string | string[];
  subject: string;
  body: string;
  html?: boolean;
  cc?: string | string[];
  reply_to?: string;
}

export interface SendEmailResult {
  message_id: string;
  /** Recipients the server accepted. */
  accepted: string[];
  /** Recipients the server refused (the message went to the others). */
  rejected: string[];
}

export const SEND_EMAIL_DEFAULTS = { max_recipients: 20 } as const;
const MAX_SUBJECT_CHARS = 998;
const MAX_BODY_CHARS = 1024 * 1024;

const ADDRESS_OR_LIST = (what: string) => ({
  anyOf: [
    { type: 'string', minLength: 3, maxLength: 320 },
    { type: 'array', items: { type: 'string', minLength: 3, maxLength: 320 }, minItems: 1, maxItems: 100 },
  ],
  description: `${what}: one address ("ada@example.com" or "Ada <ada@example.com>") or a list of them.`,
});

function maxRecipients(config: ToolConfig): number {
  const n = config.max_recipients ?? SEND_EMAIL_DEFAULTS.max_recipients;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) {
    throw new MailError(
      'mail.too_many_recipients',
      'tool_config.send_email.max_recipients must be a positive integer',
    );
  }
  return n;
}

/** A Message-ID from the call id, so a retried delivery of the same call carries the same id. */
function messageIdFor(callId: string, from: MailAddress): string {
  const local = callId.replace(/[^A-Za-z0-9._-]/g, '') || 'organism';
  const domain = from.address.split('@')[1] ?? 'organism.local';
  return `<${local}.organism@${domain}>`;
}

const sendEmail: ToolDefinition<SendEmailArgs, SendEmailResult> = {
  name: 'send_email',
  description:
    'Send an e-mail. Give to (one address or a list), subject and body; set html to true when body is HTML, ' +
    'otherwise it is sent as plain text. Optional cc (one or a list) and reply_to. Returns {message_id, accepted, ' +
    'rejected}: the recipients the mail server took and those it refused. Each address is "name@example.com" or ' +
    '"Name <name@example.com>"; line breaks in addresses or the subject are refused.',
  args: {
    type: 'object',
    properties: {
      to: ADDRESS_OR_LIST('Recipients'),
      subject: {
        type: 'string',
        maxLength: MAX_SUBJECT_CHARS,
        description: 'Subject line, one line of text.',
      },
      body: {
        type: 'string',
        maxLength: MAX_BODY_CHARS,
        description: 'The message text (HTML when html is true).',
      },
      html: {
        type: 'boolean',
        default: false,
        description: 'True when body is HTML. Default false (plain text).',
      },
      cc: ADDRESS_OR_LIST('Copy recipients'),
      reply_to: {
        type: 'string',
        minLength: 3,
        maxLength: 320,
        description: 'Address replies should go to.',
      },
    },
    required: ['to', 'subject', 'body'],
    additionalProperties: false,
  },
  readOnly: false,
  capability: 'send_email',
  source: 'native',
  guard: 'email',
  sideEffect: true,
  config: {
    type: 'object',
    properties: {
      allowed_recipients: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        description:
          'Who may receive mail: exact addresses or *@domain (checked by the email guard). Unset: anyone.',
      },
      max_recipients: {
        type: 'integer',
        minimum: 1,
        default: SEND_EMAIL_DEFAULTS.max_recipients,
        description: 'Most recipients (to and cc together) one mail may have.',
      },
    },
  },
  unavailable(services) {
    return smtpUnavailable(services.config, services.env);
  },
  async run(args, ctx) {
    const settings = smtpSettings(ctx.services.config, ctx.services.env);
    const why = smtpUnavailable(ctx.services.config, ctx.services.env);
    if (!settings || why) throw new MailError('mail.not_configured', `send_email is unavailable: ${why}`);

    // Every header field is checked before anything connects: a refused call sends nothing.
    const to = parseAddressList('to', args.to);
    const cc = parseAddressList('cc', args.cc);
    const replyTo = args.reply_to === undefined ? undefined : parseAddress('reply_to', args.reply_to);
    const subject = checkHeaderText('subject', args.subject);
    const from = parseAddress('smtp.from', settings.from);
    if (to.length === 0) throw new MailError('mail.invalid_address', 'to: give at least one recipient');
    const limit = maxRecipients(ctx.config);
    if (to.length + cc.length > limit) {
      throw new MailError(
        'mail.too_many_recipients',
        `${to.length + cc.length} recipients (to and cc); tool_config.send_email.max_recipients allows ${limit}`,
        { count: to.length + cc.length, limit },
      );
    }
    ctx.signal.throwIfAborted();

    const transport = await mailTransport(ctx.services, settings);
    const sending = transport.sendMail({
      from,
      to,
      ...(cc.length > 0 ? { cc } : {}),
      ...(replyTo ? { replyTo } : {}),
      subject,
      ...(args.html ? { html: args.body } : { text: args.body }),
      messageId: messageIdFor(ctx.callId, from),
    });
    let info: Awaited<typeof sending>;
    try {
      // Nodemailer takes no AbortSignal: stop waiting on abort (the runtime reports the timeout).
      info = await abortable(sending, ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted && err === ctx.signal.reason) throw err;
      throw mailFailure(err, settings);
    }
    return {
      message_id: info.messageId,
      accepted: info.accepted.map(addressText),
      rejected: info.rejected.map(addressText),
    };
  },
};

function addressText(a: string | { address: string }): string {
  return typeof a === 'string' ? a : a.address;
}

export default sendEmail;
