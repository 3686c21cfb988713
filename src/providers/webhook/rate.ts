/** Messages a second a channel of this provider's broadcasts send unless `channel:configure --max-rate` says otherwise: A receiver of the gateway's own signed POSTs. */
export const DEFAULT_MAX_RATE = 100;
