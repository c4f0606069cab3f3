/**
 * Checks of everything send_email puts into a mail header. The email guard checks too; this is the
 * second line, so a header injection cannot get through even if a guard rule is misconfigured.
 */
import { MailError } from '../../src/errors.ts';

export interface MailAddress {
  name: string;
  address: string;
}

// CR and LF end a header line; the other C0 controls (tab aside) and DEL have no place in one.
const HEADER_BREAK = /[\r\n]/;
const HEADER_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;
// Deliberately plain: one local part, one @, one domain; no spaces, brackets, quotes or separators.
const ADDRESS = /^[^\s@<>(),;:"[\]\\]+@[^\s@<>(),;:"[\]\\]+$/;
// `Name <addr>` or `"Name, Jr." <addr>`; the display name may not hold brackets or stray quotes.
const NAMED = /^(?:"([^"\\]*)"|([^"<>]*?))\s*<([^<>]*)>$/;

/** Refuses a header value holding CR/LF (header injection) or other control characters. */
export function checkHeaderText(field: string, value: string): string {
  if (HEADER_BREAK.test(value)) {
    throw new MailError(
      'mail.header_injection',
      `${field} contains a line break (CR or LF), which could inject extra mail headers; refused`,
      { field },
    );
  }
  if (HEADER_CONTROL.test(value)) {
    throw new MailError('mail.header_injection', `${field} contains a control character; refused`, { field });
  }
  return value;
}

/**
 * One recipient per entry: "ada@example.com" or "Ada Lovelace <ada@example.com>". A comma-separated
 * list inside one entry is refused, so the recipient count and the guard see every address.
 */
export function parseAddress(field: string, value: string): MailAddress {
  checkHeaderText(field, value);
  const text = value.trim();
  const named = NAMED.exec(text);
  const name = named ? (named[1] ?? named[2] ?? '').trim() : '';
  const address = named ? (named[3] ?? '').trim() : text;
  if (!ADDRESS.test(address)) {
    throw new MailError(
      'mail.invalid_address',
      `${field}: ${JSON.stringify(value)} is not one e-mail address (expected "name@example.com" or "Name <name@example.com>"; give several as a list)`,
      { field },
    );
  }
  return { name, address };
}

/** A string or a list of strings, each one address. */
export function parseAddressList(field: string, value: string | string[] | undefined): MailAddress[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((entry, i) => parseAddress(Array.isArray(value) ? `${field}[${i}]` : field, entry));
}
