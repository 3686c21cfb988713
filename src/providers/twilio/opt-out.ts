/**
 * Twilio's opt-out handling (docs/contacts.md, "Opt-outs"): the keywords its messaging services
 * treat as an opt-out or an opt-in when they are a message's whole body, and the error code it
 * refuses a send with once the recipient has opted out.
 */

/** A message that is one of these words (any case, surrounding whitespace ignored) opts its sender out. */
const OPT_OUT = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']);
/** … and one of these opts it back in. */
const OPT_IN = new Set(['START', 'UNSTOP', 'YES']);

/** Twilio's error 21610: "Attempt to send to unsubscribed recipient". */
export const TWILIO_OPTED_OUT_CODE = '21610';

/** Whether an SMS body is an opt-out or opt-in keyword, or neither. */
export function twilioKeyword(body: string): 'out' | 'in' | undefined {
  const word = body.trim().toUpperCase();
  return OPT_OUT.has(word) ? 'out' : OPT_IN.has(word) ? 'in' : undefined;
}
