/**
 * A Host header value (`host[:port]`) as a request may carry it: a DNS name (letters, digits,
 * `-` and `_` in dot-separated labels, an optional final dot), a dotted IPv4 address or a
 * bracketed IPv6 address, then an optional port up to 65535 (RFC 3986 allows an empty one).
 * Anything else (spaces, a bare `:port`, a comma-separated list, an unclosed `[`, characters a URL
 * cannot hold) is no host.
 */
const AUTHORITY = /^(\[[0-9a-f:.]+\]|[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*\.?)(?::(\d{0,5}))?$/i;

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
  return name.replace(/\.$/, '');
}
