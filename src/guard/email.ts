/**
 * The email guard: judges send_email arguments. Every recipient (to, cc, bcc) must match
 * tool_config.allowed_recipients (an exact address, or `*@domain` for a whole domain; both
 * case-insensitive). With no allowed_recipients the tool may mail nobody: mail leaves the
 * organism for good, so the list is opt-in. No header field may hold CR or LF (header injection).
 */
import type { ToolConfig } from '../config/types.ts';
import { allow, deny, type Verdict } from './types.ts';

export interface EmailArgs {
  to: string | string[];
  subject?: string;
  [k: string]: unknown;
}

/** Arguments that become message headers. */
const HEADER_FIELDS = [
  'to',
  'cc',
  'bcc',
  'subject',
  'from',
  'reply_to',
  'replyTo',
  'sender',
  'in_reply_to',
  'inReplyTo',
  'references',
];
const RECIPIENT_FIELDS = ['to', 'cc', 'bcc'] as const;
const ADDRESS = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$|^[^\s@<>(),;:"]+@[A-Za-z0-9-]+$/;

export function checkEmail(args: EmailArgs, toolConfig: ToolConfig): Verdict {
  if (args === null || typeof args !== 'object') {
    return deny('email.invalid_recipient', 'The arguments are not an object.', 'Give to, subject and body.');
  }
  for (const field of HEADER_FIELDS) {
    const bad = firstWithNewline(args[field]);
    if (bad !== null) {
      return deny(
        'email.header_injection',
        `The ${field} field contains a line break (CR or LF), which could inject extra headers.`,
        `Put ${field} on one line; the body is the place for line breaks.`,
        field,
      );
    }
  }
  if (args.headers !== undefined && args.headers !== null && typeof args.headers === 'object') {
    for (const [name, value] of Object.entries(args.headers as Record<string, unknown>)) {
      if (/[\r\n]/.test(name) || firstWithNewline(value) !== null) {
        return deny(
          'email.header_injection',
          `The header ${JSON.stringify(name.slice(0, 40))} contains a line break.`,
          'Put each header on one line.',
          'headers',
        );
      }
    }
  }

  const recipients: string[] = [];
  for (const field of RECIPIENT_FIELDS) {
    const value = args[field];
    if (value === undefined || value === null) continue;
    const list = Array.isArray(value) ? value : [value];
    for (const item of list) {
      if (typeof item !== 'string') {
        return deny(
          'email.invalid_recipient',
          `${field} must be an address or a list of addresses.`,
          'Give addresses as strings.',
          field,
        );
      }
      for (const part of splitAddresses(item)) {
        const address = bareAddress(part);
        if (address === null) {
          return deny(
            'email.invalid_recipient',
            `${JSON.stringify(part.slice(0, 100))} in ${field} is not an email address.`,
            'Give addresses like name@example.com.',
            part.slice(0, 100),
          );
        }
        recipients.push(address);
      }
    }
  }
  if (recipients.length === 0) {
    return deny('email.no_recipients', 'The message has no recipients.', 'Give at least one address in to.');
  }

  const allowed = allowList(toolConfig.allowed_recipients);
  if (allowed.length === 0) {
    return deny(
      'email.recipient_not_allowed',
      'This tool has no allowed_recipients, so it may not mail anyone.',
      'Add the addresses (or *@domain) this listener may write to under tool_config.send_email.allowed_recipients.',
      recipients[0],
    );
  }
  for (const r of recipients) {
    if (!allowed.some((p) => recipientMatches(r, p))) {
      return deny(
        'email.recipient_not_allowed',
        `${r} is not in this tool's allowed_recipients.`,
        `Write only to allowed recipients: ${allowed.slice(0, 10).join(', ')}.`,
        r,
      );
    }
  }
  return allow();
}

/** `x@y.com` matches itself; `*@y.com` matches every address at y.com (not at sub.y.com). Case-insensitive. */
export function recipientMatches(address: string, pattern: string): boolean {
  const a = address.toLowerCase();
  const p = pattern.trim().toLowerCase();
  if (p.startsWith('*@')) return a.endsWith(p.slice(1)) && a.indexOf('@') === a.length - p.length + 1;
  return a === p;
}

function allowList(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value)) return [];
  return value.filter((v): v is string => typeof v === 'string' && v.trim() !== '');
}

function firstWithNewline(value: unknown): string | null {
  if (typeof value === 'string') return /[\r\n]/.test(value) ? value : null;
  if (Array.isArray(value)) for (const v of value) if (typeof v === 'string' && /[\r\n]/.test(v)) return v;
  return null;
}

/** Splits `a@x.com, "Doe, Jane" <j@y.com>` at commas and semicolons outside quotes and angle brackets. */
function splitAddresses(text: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  let angle = 0;
  for (const c of text) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === '<') angle++;
    else if (!quoted && c === '>') angle = Math.max(0, angle - 1);
    if ((c === ',' || c === ';') && !quoted && angle === 0) {
      if (current.trim()) out.push(current.trim());
      current = '';
      continue;
    }
    current += c;
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

/** The address in `Name <addr>` or a bare `addr`, or null when it is not one. */
function bareAddress(part: string): string | null {
  const m = /<([^<>]*)>\s*$/.exec(part);
  const address = (m ? m[1]! : part).trim();
  return ADDRESS.test(address) ? address : null;
}
