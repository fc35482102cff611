// Request examples of POST /messages ('x-examples' of the route) for the content kinds added beyond
// the spec (decision 0032), kept apart so that messages-routes.ts stays short.
const to = { type: 'phone', phoneE164: '+15551234567' };
const inboundMessageId = '3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b';

export const KIND_EXAMPLES: Record<string, { summary: string; value: unknown }> = {
  audio: {
    summary: 'A voice note (audio) uploaded with POST /media; video and sticker go the same way',
    value: {
      externalId: 'ticket-77-voice',
      to,
      content: { type: 'audio', audio: { mediaId: '7c9e6679-7425-40de-944b-e07fc1f90ae7' } },
    },
  },
  location: {
    summary: 'A location',
    value: {
      externalId: 'store-12-location',
      to,
      content: {
        type: 'location',
        location: { latitude: 52.5163, longitude: 13.3777, name: 'Store 12', address: 'Pariser Platz 1, Berlin' },
      },
    },
  },
  contacts: {
    summary: 'A contact card',
    value: {
      externalId: 'ticket-77-contact',
      to,
      content: {
        type: 'contacts',
        contacts: [{ name: { formattedName: 'Support desk' }, phones: [{ phone: '+15550100200', type: 'WORK' }] }],
      },
    },
  },
  interactiveList: {
    summary: 'A list to choose from (replies arrive as inbound messages)',
    value: {
      externalId: 'ticket-77-slots',
      to,
      content: {
        type: 'interactive',
        interactive: {
          type: 'list',
          body: { text: 'When should we pick up the parcel?' },
          list: {
            button: 'Pick a slot',
            sections: [
              { title: 'Tomorrow', rows: [{ id: 'tue-am', title: 'Morning', description: '8:00–12:00' }] },
              { title: 'Wednesday', rows: [{ id: 'wed-pm', title: 'Afternoon' }] },
            ],
          },
        },
      },
    },
  },
  interactiveButtons: {
    summary: 'Reply buttons with an image header, sent as a reply to an inbound message',
    value: {
      externalId: 'ticket-77-confirm',
      to,
      content: {
        type: 'interactive',
        interactive: {
          type: 'button',
          header: { type: 'image', image: { url: 'https://example.com/parcel.jpg' } },
          body: { text: 'Is this your parcel?' },
          buttons: [
            { id: 'yes', title: 'Yes' },
            { id: 'no', title: 'No' },
          ],
        },
      },
      replyTo: { inboundMessageId },
    },
  },
  reaction: {
    summary: 'A reaction to an earlier message of the conversation (an empty emoji removes it)',
    value: {
      externalId: 'ticket-77-thumbs',
      to,
      content: {
        type: 'reaction',
        reaction: { inboundMessageId, emoji: '👍' },
      },
    },
  },
};
