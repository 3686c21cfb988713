/**
 * Credentials out of text a provider wrote (docs/operating-safely.md, Staying up): a provider's error may echo the token
 * it was sent, and that text is stored as a message's failureReason, shown in views and events,
 * and logged. Each credential is replaced by `***` as written, URL-encoded and JSON-escaped; a
 * credential that is a URL with a password (an SMTP URL) also has the password alone replaced.
 */

/** Shorter values are not looked for: replacing them would mangle ordinary words, and no credential is that short. */
const SHORTEST = 4;

/** The forms a credential may take in a provider's text. */
function forms(secret: string): string[] {
  const found = [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)];
  try {
    const url = new URL(secret);
    if (url.password) found.push(url.password, decodeURIComponent(url.password));
  } catch {
    // Not a URL: the value alone.
  }
  return found;
}

/** `text` without any of `secrets` in it. */
export function redactSecrets(text: string, secrets: Iterable<string | null | undefined>): string {
  const all = new Set<string>();
  for (const secret of secrets) if (secret) for (const form of forms(secret)) if (form.length >= SHORTEST) all.add(form);
  // Longest first, so that a credential containing another is replaced whole.
  let redacted = text;
  for (const form of [...all].sort((a, b) => b.length - a.length)) redacted = redacted.split(form).join('***');
  return redacted;
}
