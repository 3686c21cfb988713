/**
 * WhatsApp's error 131050: the recipient chose to stop receiving marketing messages from the
 * business. It refuses a send, or fails a sent message in a status webhook; either way the contact
 * is opted out of the channel (docs/contacts.md, "Opt-outs").
 */
export const WHATSAPP_OPTED_OUT_CODE = '131050';
