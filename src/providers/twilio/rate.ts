/** Messages a second a channel of this provider's broadcasts send unless `channel:configure --max-rate` says otherwise: Twilio's rate for a long code number (one message a second). */
export const DEFAULT_MAX_RATE = 1;
