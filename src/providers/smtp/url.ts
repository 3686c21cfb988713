/** The channel's SMTP URL, read and shown without its password (no mail library needed: the admin commands use it). */

/** An SMTP relay as the channel's URL names it: `smtp://` (STARTTLS when offered) or `smtps://` (TLS from the start). */
export interface SmtpRelay {
  secure: boolean;
  host: string;
  port: number;
  user: string;
  pass: string;
}

/** The relay of an `smtp[s]://[user:pass@]host[:port]` URL, or null when it is not one. */
export function parseSmtpUrl(value: string): SmtpRelay | null {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') return null;
  if (!url.hostname || (url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) return null;
  const secure = url.protocol === 'smtps:';
  try {
    return {
      secure,
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port ? Number(url.port) : secure ? 465 : 587,
      user: decodeURIComponent(url.username),
      pass: decodeURIComponent(url.password),
    };
  } catch {
    return null;
  }
}

/** The URL with its password replaced by `***`: what listings show. */
export function maskSmtpUrl(value: string): string {
  try {
    const url = new URL(value.trim());
    if (url.password) url.password = '***';
    return url.toString().replace(/\/$/, '');
  } catch {
    return '***';
  }
}
