// The content fields of an inbound message as the API and message.inbound show them (decision
// 0033): in the API every kind's field, null unless the message is of that kind; in the event only
// the fields that have a value; a reaction's target resolved to our message when it is one of ours.
import { type InboundContent, NO_CONTENT } from './parse-inbound-content.js';

/** Our message a reaction or reply points at (null when not ours, or purged). */
export type OurMessage = { id: string; external_id: string } | null | undefined;

export function contentFields(content: InboundContent | null | undefined, reactedTo: OurMessage) {
  const c = content ?? NO_CONTENT;
  return {
    media: c.media,
    // flowReply: a Flow's answer (nfm_reply), null on other replies and on rows stored before.
    interactive: c.interactive ? { ...c.interactive, flowReply: c.interactive.flowReply ?? null } : null,
    button: c.button,
    reaction: c.reaction
      ? { ...c.reaction, messageId: reactedTo?.id ?? null, externalId: reactedTo?.external_id ?? null }
      : null,
    location: c.location,
    contacts: c.contacts,
    system: c.system,
    unsupported: c.unsupported,
    // Absent on rows stored before they were kept (then null).
    order: c.order ?? null,
    referral: c.referral ?? null,
    providerErrors: c.providerErrors,
    context: c.context,
  };
}

/** The event's content: only the fields with a value, so a plain text's event keeps its fields. */
export function eventContentFields(content: InboundContent | null | undefined, reactedTo: OurMessage) {
  return Object.fromEntries(
    Object.entries(contentFields(content, reactedTo)).filter(
      ([, v]) => v !== null && !(Array.isArray(v) && v.length === 0),
    ),
  );
}
