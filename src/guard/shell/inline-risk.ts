/**
 * What inline interpreter code does with the network, read from its text the way inline.ts reads
 * its shell-outs: code that opens a socket or sends a request, and with it hands a shell to the
 * connection (dup2 of the socket, `pty.spawn`, a shell started with the socket as its input), sends
 * the whole environment, or reads a file outside the workspace. Code that never touches the
 * network gives null, so ordinary one-liners cost one regular expression per family.
 */
import type { Family, Literal } from './inline-lexer.ts';

export interface InlineNet {
  /** A shell is handed to the connection (a reverse or bind shell). */
  shell: boolean;
  /** The whole environment is read (`os.environ`, `process.env`, `%ENV`). */
  environment: boolean;
  /** Absolute or home paths the code opens for reading, as written. */
  files: string[];
}

/** Opening a socket or sending a request, searched in the code outside its strings. */
const NETWORK: Record<Family, RegExp> = {
  python:
    /\bsocket\s*\.\s*(?:socket|create_connection|create_server|fromfd|socketpair)\b|\.\s*(?:connect|connect_ex|bind|sendall|sendto)\s*\(|\burllib\b|\brequests\b|\bhttp\s*\.\s*client\b|\bhttpx\b|\bftplib\b|\bsmtplib\b|\btelnetlib\b|\baiohttp\b/,
  node: /\bfetch\s*\(|\bnet\s*\.\s*(?:connect|createConnection|createServer|Socket)\b|\bnew\s+(?:net\s*\.\s*)?Socket\b|\.\s*(?:request|connect|createSocket)\s*\(|\bXMLHttpRequest\b|\bWebSocket\b/,
  perl: /\bsocket\s*\(|\bconnect\s*\(|\bIO::Socket\b|\bLWP\b|\bHTTP::Tiny\b|\bNet::\w+/,
  ruby: /\b(?:TCPSocket|TCPServer|UDPSocket|UNIXSocket|Socket)\b|\bNet::HTTP\b|\bOpenURI\b|\bURI\s*\.\s*open\b|\bopen-uri\b/,
  php: /\b(?:fsockopen|pfsockopen|socket_create|socket_connect|stream_socket_client|stream_socket_server|curl_init|curl_exec)\s*\(/,
  awk: /(?!)/,
};
/** Node's network modules, named in a string (`require("net")`). */
const NODE_NET_MODULE = /^(node:)?(net|http|https|http2|tls|dgram)$/;
/** gawk's network special files. */
const AWK_INET = /^\/inet[46]?\/(tcp|udp)\//;

/** A shell as a program name: `/bin/sh`, `bash`, `sh -i`, `/bin/sh -i <&3 >&3`, `cmd.exe`. */
const SHELL_LITERAL =
  /^\s*(\/usr)?(\/bin\/)?(ba|z|da|k|mk|c|tc|fi|a|y)?sh(\s+-i\b|\s*$|\s+[<>0-9])|^\s*(cmd(\.exe)?|powershell(\.exe)?|pwsh)\s*$/;
/** The connection made the process's standard streams, or a terminal spawned on it. */
const STREAMS_TO_SOCKET: Record<Family, RegExp> = {
  python: /\bdup2\s*\(|\bpty\s*\.\s*spawn\s*\(/,
  node: /\.\s*pipe\s*\(\s*[\w$]+\s*\.\s*stdin\b/,
  perl: /\bopen\s*\(?\s*STD(?:IN|OUT|ERR)\b|\bdup2\b/,
  ruby: /\b(?:STDIN|STDOUT|\$stdin|\$stdout)\s*\.\s*reopen\b|\bPTY\s*\.\s*spawn\b/,
  php: /(?!)/,
  awk: /(?!)/,
};

/** The environment as a whole, not one variable. */
const WHOLE_ENVIRONMENT: Record<Family, RegExp> = {
  python: /\bos\s*\.\s*environ\b(?!\s*(?:\[|\.\s*get\s*\())|\bos\s*\.\s*environb\b/,
  node: /\bprocess\s*\.\s*env\b(?!\s*(?:\.|\[|\?\.))/,
  perl: /%ENV\b/,
  ruby: /\bENV\b(?!\s*(?:\[|\.\s*fetch\b))/,
  php: /\$_ENV\b(?!\s*\[)|\$_SERVER\b(?!\s*\[)|\bgetenv\s*\(\s*\)/,
  awk: /\bin\s+ENVIRON\b/,
};

/** Calls that open a file for reading, so a path literal near them is what is read. */
const READS_FILE: Record<Family, RegExp> = {
  python: /\bopen\s*\(|\bread_(?:bytes|text)\s*\(|\bsendfile\s*\(/,
  node: /\b(?:readFileSync|readFile|createReadStream|openAsBlob)\s*\(/,
  perl: /\bopen\s*\(?|<\s*\$?\w*\s*>/,
  ruby: /\b(?:File|IO)\s*\.\s*(?:read|binread|open|readlines|foreach)\b/,
  php: /\b(?:file_get_contents|fopen|readfile|file)\s*\(/,
  awk: /\bgetline\s*</,
};
const PATH_LITERAL = /^(\/|~\/)[^\s*?]+$/;

/**
 * What one piece of code does with the network, or null when it opens no connection. `masked`
 * is the code with its strings blanked (inline-lexer.ts).
 */
export function scanNetwork(family: Family, masked: string, literals: readonly Literal[]): InlineNet | null {
  let network = NETWORK[family].test(masked);
  if (!network && family === 'node') network = literals.some((l) => NODE_NET_MODULE.test(l.value));
  if (!network && family === 'awk') network = literals.some((l) => AWK_INET.test(l.value));
  if (!network) return null;
  const shellNamed = literals.some((l) => SHELL_LITERAL.test(l.value));
  let shell: boolean;
  if (family === 'awk') shell = awkCommandCoprocess(masked, literals);
  else shell = shellNamed || STREAMS_TO_SOCKET[family].test(masked);
  const files = READS_FILE[family].test(masked)
    ? literals.filter((l) => !l.dynamic && PATH_LITERAL.test(l.value)).map((l) => l.value)
    : [];
  return { shell, environment: WHOLE_ENVIRONMENT[family].test(masked), files };
}

/**
 * gawk talks to a socket through a coprocess (`print |& s`, `s |& getline`); a coprocess on any
 * other word, or system(), runs what comes from it as commands.
 */
function awkCommandCoprocess(masked: string, literals: readonly Literal[]): boolean {
  if (/(?<![\w$])system\s*\(/.test(masked)) return true;
  const sockets = new Set<string>();
  for (const m of masked.matchAll(/(\w+)\s*=\s*(?=$|[^=])/g)) {
    const at = m.index + m[0].length;
    if (literals.some((l) => l.start >= at && l.start <= at + 1 && AWK_INET.test(l.value)))
      sockets.add(m[1]!);
  }
  for (const m of masked.matchAll(/\(?\s*(\w+)\s*\|&\s*getline/g)) if (!sockets.has(m[1]!)) return true;
  return false;
}
