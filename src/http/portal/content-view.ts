// How the portal shows what a message carries, by kind (decision 0039): an inbound message's
// content (decision 0033: media, button and list replies, reactions, location, contacts, system,
// unsupported), what our own message sent, the reactions our message received, and the links
// between them, and inbound files played or shown (decision 0041) (the message a reply answered, the conversation of a number). One module for the
// inbox, the inbound message page, the message page and the conversation view.
import type { Reaction } from '../../lifecycle/message-reactions.js';
import type { SenderService } from '../../senders/sender-service.js';
import { isInlineType } from '../inbound-file-reply.js';
import { when } from './format.js';
import { type Html, html, type Part } from './html.js';
import { inboundMediaPath } from './inbox-media-routes.js';

/** An inbound message as the inbox service returns it. */
export type InboundItem = Awaited<ReturnType<SenderService['inboundMessage']>>;

/** The address of one number's conversation on an account (the number is a path segment). */
export function conversationPath(accountId: string, phone: string): string {
  return `/portal/conversations/${accountId}/${encodeURIComponent(phone)}`;
}

/** A link to the conversation with a number; nothing for a sender without one (a user id only). */
export function conversationLink(accountId: string, phone: string | null, label: Part = 'Conversation'): Part {
  return phone ? html`<a href="${conversationPath(accountId, phone)}">${label}</a>` : '';
}

/** A map of a point: a plain link to OpenStreetMap (nothing is loaded from it by the page). */
export function mapUrl(latitude: number, longitude: number): string {
  const q = new URLSearchParams({ mlat: String(latitude), mlon: String(longitude) });
  return `https://www.openstreetmap.org/?${q.toString()}#map=16/${latitude}/${longitude}`;
}

/** Our message a reply or a reaction points at: a link while it exists, else the provider's id. */
function ourMessage(messageId: string | null, externalId: string | null, providerId: string | null): Part {
  if (messageId) return html`<a href="/portal/messages/${messageId}">our message ${externalId ?? messageId}</a>`;
  return providerId ? html`a message not kept here (<code>${providerId}</code>)` : 'a message';
}

/** Why a file is not shown, in words (its fetch state, decision 0034). */
const FILE_STATES: Record<string, string> = {
  pending: 'being fetched from the provider',
  failed: 'could not be fetched',
  skipped_too_large: 'too large to keep',
  skipped_type: 'of a type not kept',
};

/** The file itself once fetched: a player, a thumbnail or a download link (inbox-media-routes.ts). */
function filePart(m: InboundItem): Part {
  const media = m.media!;
  if (media.state === undefined) return '';
  if (media.state !== 'fetched')
    return html` <span class="file-state">(file ${FILE_STATES[media.state] ?? media.state})</span>`;
  const src = inboundMediaPath(m.inboundMessageId);
  const label = media.caption ?? media.filename ?? `${media.kind} from ${m.from ?? m.fromUserId ?? 'the sender'}`;
  const inline = isInlineType(media.mimeType ?? '');
  if (inline && media.kind === 'audio') return html` <audio controls preload="metadata" src="${src}"></audio>`;
  if (inline && media.kind === 'video') return html` <video controls preload="metadata" src="${src}"></video>`;
  if (inline && (media.kind === 'image' || media.kind === 'sticker'))
    return html` <a href="${src}"><img class="thumb" alt="${label}" src="${src}" width="160" /></a>`;
  return html` <a href="${src}" download>Download ${media.filename ?? media.kind}</a>`;
}

function mediaPart(m: InboundItem): Html {
  const media = m.media!;
  const kind =
    media.kind === 'audio' && media.voice
      ? 'voice note'
      : media.kind === 'sticker' && media.animated
        ? 'animated sticker'
        : media.kind;
  return html`<span class="media" data-media-kind="${media.kind}"
    ><strong>${kind}</strong>${media.filename ? html` <code>${media.filename}</code>` : ''}${
      media.mimeType ? html` <span class="muted">(${media.mimeType})</span>` : ''
    }${media.caption ? html`: ${media.caption}` : ''}${filePart(m)}</span
  >`;
}

function locationPart(l: NonNullable<InboundItem['location']>): Html {
  const place = [l.name, l.address].filter((x): x is string => !!x).join(', ');
  const point =
    l.latitude !== null && l.longitude !== null
      ? html`${l.latitude}, ${l.longitude}
          <a href="${mapUrl(l.latitude, l.longitude)}" rel="noopener noreferrer" target="_blank">map</a>`
      : '';
  return html`<span class="location"><strong>location</strong> ${point}${place ? html` ${place}` : ''}</span>`;
}

function contactsPart(cards: NonNullable<InboundItem['contacts']>): Html {
  return html`<span class="contacts"
    ><strong>${cards.length === 1 ? 'contact' : `${cards.length} contacts`}</strong> ${cards.map((c, i) => {
      const name =
        c.name.formattedName ?? ([c.name.firstName, c.name.lastName].filter(Boolean).join(' ') || '(no name)');
      const phones = c.phones.map((p) => p.phone ?? p.waId).filter((p): p is string => !!p);
      return html`${i > 0 ? '; ' : ''}${name}${phones.length > 0 ? html` (${phones.join(', ')})` : ''}`;
    })}</span
  >`;
}

/** A link the provider gave (an ad's page or image): only http(s), else the text alone. */
function providerLink(url: string | null, label: Part): Part {
  return url && /^https?:\/\//i.test(url)
    ? html`<a href="${url}" rel="noopener noreferrer nofollow" target="_blank">${label}</a>`
    : label;
}

type Referral = NonNullable<InboundItem['referral']>;

/** Where a sender came from: the click-to-chat ad or post (the provider's `referral`). */
export function referralPart(r: Referral): Html {
  const what = r.sourceType === 'post' ? 'a post' : 'an ad';
  const title = r.headline ?? r.sourceId ?? r.sourceUrl ?? '';
  return html`<span class="referral"><strong>from ${what}</strong> “${providerLink(r.sourceUrl, title)}”</span>`;
}

/** Every field of a referral, for a page of its own rows. */
function referralRows(r: Referral): [string, Part][] {
  const rows: [string, Part][] = [['Came from', referralPart(r)]];
  if (r.body) rows.push(['Ad text', r.body]);
  if (r.sourceType || r.sourceId)
    rows.push(['Ad source', html`${r.sourceType ?? ''} <code>${r.sourceId ?? ''}</code>`]);
  const media = r.imageUrl ?? r.videoUrl ?? r.thumbnailUrl;
  if (media) rows.push(['Ad media', providerLink(media, r.mediaType ?? 'media')]);
  if (r.ctwaClid) rows.push(['Ad click id', html`<code>${r.ctwaClid}</code>`]);
  return rows;
}

function orderPart(o: NonNullable<InboundItem['order']>): Html {
  const n = o.productItems.length;
  return html`<span class="order"
    ><strong>order</strong> of ${n} item${n === 1 ? '' : 's'}:
    ${o.productItems.map(
      (i, k) =>
        html`${k > 0 ? ', ' : ''}<code>${i.productRetailerId ?? '?'}</code> ×
          ${i.quantity ?? '?'}${i.itemPrice !== null ? html` at ${i.itemPrice} ${i.currency ?? ''}` : ''}`,
    )}${o.text ? html` — ${o.text}` : ''}</span
  >`;
}

/** A Flow's answer in a line (decision 0075): its fields but the token, cut short; else its raw text. */
function flowSummary(f: NonNullable<NonNullable<InboundItem['interactive']>['flowReply']>): string {
  const cut = (t: string) => (t.length > 300 ? `${Array.from(t).slice(0, 300).join('')}…` : t);
  if (f.response === null || typeof f.response !== 'object' || Array.isArray(f.response))
    return cut(f.responseRaw ?? JSON.stringify(f.response) ?? '');
  const fields = Object.entries(f.response as Record<string, unknown>).filter(([k]) => k !== 'flow_token');
  return cut(fields.map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', '));
}

/** What an inbound message carries, in a line: by kind, else its text. */
export function inboundContent(m: InboundItem): Html {
  const parts: Part[] = [];
  if (m.interactive?.flowReply)
    parts.push(
      html`<span class="choice"><strong>answered a Flow</strong> ${flowSummary(m.interactive.flowReply)}</span>`,
    );
  else if (m.interactive)
    parts.push(
      html`<span class="choice"
        ><strong>${m.interactive.type === 'list_reply' ? 'chose from a list' : 'pressed'}</strong> “${
          m.interactive.title ?? m.interactive.id ?? ''
        }”</span
      >`,
    );
  else if (m.button)
    parts.push(html`<span class="choice"><strong>pressed</strong> “${m.button.text ?? m.button.payload ?? ''}”</span>`);
  else if (m.reaction)
    parts.push(
      html`<span class="reaction"
        >${m.reaction.emoji ? html`<strong>reacted</strong> ${m.reaction.emoji}` : html`<strong>removed a reaction</strong>`}
        to ${ourMessage(m.reaction.messageId, m.reaction.externalId, m.reaction.providerMessageId)}</span
      >`,
    );
  else if (m.media) parts.push(mediaPart(m));
  else if (m.location) parts.push(locationPart(m.location));
  else if (m.contacts && m.contacts.length > 0) parts.push(contactsPart(m.contacts));
  else if (m.system)
    parts.push(html`<span class="system"><strong>system</strong> ${m.system.body ?? m.system.type ?? ''}</span>`);
  else if (m.order) parts.push(orderPart(m.order));
  else if (m.unsupported)
    parts.push(html`<span class="unsupported"><strong>unsupported</strong> ${m.unsupported.type ?? ''}</span>`);
  else parts.push(m.text ?? m.displayText ?? '');
  if (m.referral) parts.push(html` ${referralPart(m.referral)}`);
  if (m.replyTo && !m.reaction)
    parts.push(
      html` <span class="reply-to"
        >(in reply to ${ourMessage(m.replyTo.messageId, m.replyTo.externalId, m.replyTo.providerMessageId)})</span
      >`,
    );
  if (m.context?.forwarded) parts.push(html` <span class="muted">(forwarded)</span>`);
  return html`${parts}`;
}

/** Every content field of an inbound message, for its own page. */
export function inboundDetail(m: InboundItem): Html {
  const rows: [string, Part][] = [
    ['From', html`${m.from ?? m.fromUserId ?? '—'} ${m.fromDisplayName}`],
    ['Received', when(m.receivedAt)],
    ['Type', m.messageType],
    ['Content', inboundContent(m)],
    ['Text', m.text ?? '—'],
  ];
  if (m.interactive) rows.push(['Chosen id', html`<code>${m.interactive.id ?? ''}</code>`]);
  if (m.interactive?.description) rows.push(['Row description', m.interactive.description]);
  if (m.button?.payload) rows.push(['Button payload', html`<code>${m.button.payload}</code>`]);
  if (m.contacts)
    m.contacts.forEach((c, i) =>
      rows.push([
        `Contact ${i + 1}`,
        html`${c.name.formattedName ?? ''}
        ${c.phones.map((p) => html`<br />${p.type ?? 'phone'}: ${p.phone ?? p.waId ?? ''}`)}
        ${c.emails.map((e) => html`<br />${e.type ?? 'email'}: ${e.email ?? ''}`)}
        ${c.organization?.company ? html`<br />${c.organization.company}` : ''}`,
      ]),
    );
  if (m.order)
    m.order.productItems.forEach((i, k) =>
      rows.push([
        `Order item ${k + 1}`,
        html`<code>${i.productRetailerId ?? ''}</code> × ${i.quantity ?? ''}
          ${i.itemPrice !== null ? html`at ${i.itemPrice} ${i.currency ?? ''}` : ''}`,
      ]),
    );
  if (m.order?.catalogId) rows.push(['Catalog', html`<code>${m.order.catalogId}</code>`]);
  if (m.referral) rows.push(...referralRows(m.referral));
  for (const e of m.providerErrors)
    rows.push(['Provider error', `${e.code ?? ''} ${e.title ?? ''} ${e.details ?? ''}`]);
  return html`<dl class="fields">
    ${rows.map(
      ([k, v]) =>
        html`<dt>${k}</dt>
          <dd>${v}</dd>`,
    )}
  </dl>`;
}

/** What our message sent (its stored content), in a line. */
export function outboundContent(content: unknown): Html {
  const c = (typeof content === 'object' && content !== null ? content : {}) as Record<string, unknown>;
  const field = (o: unknown, k: string): string => {
    const v = typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[k] : undefined;
    return typeof v === 'string' ? v : '';
  };
  const type = field(c, 'type');
  if (type === 'text') return html`${field(c, 'text')}`;
  if (type === 'template')
    return html`<strong>template</strong> ${field(c.template, 'name')}
      <span class="muted">(${field(c.template, 'language')})</span>`;
  if (type === '') return html``;
  const filename = field(c[type], 'filename');
  const caption = field(c, 'caption');
  return html`<strong>${type}</strong
    >${filename ? html` <code>${filename}</code>` : ''}${caption ? html`: ${caption}` : ''}`;
}

/** The reactions our message received (newest per person), for its page. */
export function reactionsReceived(reactions: readonly Reaction[]): Html {
  if (reactions.length === 0) return html`<p>None.</p>`;
  return html`<ul class="reactions">
    ${reactions.map(
      (r) =>
        html`<li>
          <span class="emoji">${r.emoji}</span> from ${r.from ?? r.fromUserId ?? 'someone'} at ${when(r.reactedAt)}
          ${r.inboundMessageId ? html`<a href="/portal/inbox/${r.inboundMessageId}">(message)</a>` : ''}
        </li>`,
    )}
  </ul>`;
}
