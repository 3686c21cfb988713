/** Messages a second a channel of this provider's broadcasts send unless `channel:configure --max-rate` says otherwise: WhatsApp Cloud API's default throughput for a business phone number. */
export const DEFAULT_MAX_RATE = 80;
