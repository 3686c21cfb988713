/** Messages a second a channel of this provider's broadcasts send unless `channel:configure --max-rate` says otherwise: A modest pace most SMTP relays accept without throttling. */
export const DEFAULT_MAX_RATE = 10;
