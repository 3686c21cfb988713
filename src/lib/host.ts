/**
 * A Host header value (`host[:port]`) as a request may carry it: a DNS name (letters, digits,
 * `-` and `_` in dot-separated labels, an optional final dot), a dotted IPv4 address or a
 * bracketed IPv6 address, then an optional port up to 65535 (RFC 3986 allows an empty one).
 * Anything else (spaces, a bare `:port`, a comma-separated list, an unclosed `[`, characters a URL
 * cannot hold) is no host.
 */
const AUTHORITY = /^(\[[0-9a-f:.]+\]|[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*\.?)(?::(\d{0,5}))?$/i;

/**
 * Names of that form the URL parser may still refuse: a label in IDNA's ASCII form (`xn--…`),
 * which must decode to valid Unicode (`xn--pi-bma` does not), and a name ending in a number,
 * which is read as an IPv4 address and must be one (`1.2.3.256`, `host.123`). Only these are
 * handed to the parser, so that ordinary names cost no more than the pattern.
 */
const PARSER_DECIDES = /(?:^|\.)xn--|(?:^|\.)(?:\d+|0x[0-9a-f]*)\.?$/i;

/** The lowercased host name of a Host header value without its port, or null when it is no valid host. */
export function hostName(raw: string | null | undefined): string | null {
  if (!raw || raw.length > 300) return null;
  const match = AUTHORITY.exec(raw);
  if (!match) return null;
  const port = match[2];
  if (port && Number(port) > 65535) return null;
  const name = match[1]!.toLowerCase();
  if (name.startsWith('[')) {
    // The URL parser decides what an IPv6 literal is.
    try {
      return new URL(`http://${name}/`).hostname;
    } catch {
      return null;
    }
  }
  // A name the URL parser refuses cannot be the host of a request URL: it names no workspace.
  if (PARSER_DECIDES.test(name) && !parses(name)) return null;
  return name.replace(/\.$/, '');
}

function parses(name: string): boolean {
  try {
    new URL(`http://${name}/`);
    return true;
  } catch {
    return false;
  }
}
