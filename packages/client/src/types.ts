// The request and answer types of both clients, derived from the generated openapi-types.ts. Where
// the document types a field more loosely than the service accepts it (`to`, `content`, `replyTo`:
// one shape per `type`, a cross-field rule the schema cannot state), the shape here is the exact
// one, checked against the generated type (AssignableTo) so that a change to the document that
// breaks it fails tsc.
import type { components, operations } from './openapi-types.js';

export type Schemas = components['schemas'];
export type JsonBody<K extends keyof operations> = operations[K] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
export type QueryOf<K extends keyof operations> = NonNullable<operations[K]['parameters']['query']>;

// `content` as the document types it is one object with every field optional; the service accepts
// exactly one shape per `type` (src/messages/send-request.ts). These are those shapes, so that a
// text message without `text` (or with an `image`) does not compile. Each is checked against the
// generated type below (AssignableTo), so a change to the document that breaks them fails tsc.
type GeneratedContent = JsonBody<'sendMessage'>['content'];
type Media = { url: string; mediaId?: never } | { mediaId: string; url?: never };
export type TextContent = { type: 'text'; text: string };
export type TemplateContent = { type: 'template'; template: NonNullable<GeneratedContent['template']> };
export type ImageContent = { type: 'image'; image: Media; caption?: string };
export type DocumentContent = {
  type: 'document';
  document: Media & { filename?: string };
  caption?: string;
};
export type AudioContent = { type: 'audio'; audio: Media };
export type VideoContent = { type: 'video'; video: Media; caption?: string };
export type StickerContent = { type: 'sticker'; sticker: Media };
export type LocationContent = { type: 'location'; location: NonNullable<GeneratedContent['location']> };
export type ContactsContent = { type: 'contacts'; contacts: NonNullable<GeneratedContent['contacts']> };
type Interactive = NonNullable<GeneratedContent['interactive']>;
type InteractiveCommon = Pick<Interactive, 'body' | 'footer'>;
type MediaHeader<K extends 'image' | 'video' | 'document'> = { type: K } & { [P in K]: Media };
type Header = { type: 'text'; text: string } | MediaHeader<'image'> | MediaHeader<'video'> | MediaHeader<'document'>;
/** Reply buttons, a list (text header only) or a call-to-action URL. */
export type InteractiveContent = {
  type: 'interactive';
  interactive:
    | (InteractiveCommon & { type: 'button'; header?: Header; buttons: NonNullable<Interactive['buttons']> })
    | (InteractiveCommon & {
        type: 'list';
        header?: { type: 'text'; text: string };
        list: NonNullable<Interactive['list']>;
      })
    | (InteractiveCommon & { type: 'cta_url'; header?: Header; ctaUrl: NonNullable<Interactive['ctaUrl']> });
};
/** Names the earlier message one way: ours by messageId or externalId, or an inbound one. */
export type MessageRef =
  | { messageId: string; externalId?: never; inboundMessageId?: never }
  | { externalId: string; messageId?: never; inboundMessageId?: never }
  | { inboundMessageId: string; messageId?: never; externalId?: never };
/** An emoji on an earlier message of the conversation ('' removes it); POST /messages only. */
export type ReactionContent = { type: 'reaction'; reaction: MessageRef & { emoji: string } };
/** What to send: one shape per `type`. */
export type MessageContent =
  | TextContent
  | TemplateContent
  | ImageContent
  | DocumentContent
  | AudioContent
  | VideoContent
  | StickerContent
  | LocationContent
  | ContactsContent
  | InteractiveContent
  | ReactionContent;
type AssignableTo<T extends U, U> = T;
/**
 * Whom a message goes to: a number (`phoneE164`, E.164) or, for a user the provider names by id
 * only, its `userId` (`fromUserId` of an inbound message). Each type needs its own field.
 */
export type Recipient =
  { type: 'phone'; phoneE164: string; userId?: never } | { type: 'userId'; userId: string; phoneE164?: never };
export type SendMessageRequest = AssignableTo<
  Omit<JsonBody<'sendMessage'>, 'to' | 'content' | 'replyTo'> & {
    to: Recipient;
    content: MessageContent;
    replyTo?: MessageRef;
  },
  JsonBody<'sendMessage'>
>;
export type SendBroadcastRequest = AssignableTo<
  Omit<JsonBody<'sendBroadcast'>, 'content'> & { content: Exclude<MessageContent, ReactionContent> },
  JsonBody<'sendBroadcast'>
>;
export type CreateWebhookEndpointRequest = JsonBody<'createWebhookEndpoint'>;
export type UpdateWebhookEndpointRequest = JsonBody<'updateWebhookEndpoint'>;
export type LookupSendersRequest = JsonBody<'lookupSenders'>;
export type CreateTemplateRequest = JsonBody<'createTemplate'>;
export type SetInboxFilterRequest = JsonBody<'setInboxFilter'>;
export type CreateForwardingRuleRequest = JsonBody<'createForwardingRule'>;
export type UpdateForwardingRuleRequest = JsonBody<'updateForwardingRule'>;
export type AddSuppressionRequest = JsonBody<'addSuppression'>;
export type SetOptOutKeywordsRequest = JsonBody<'setOptOutKeywords'>;
export type ListMessagesQuery = QueryOf<'listMessages'>;
export type ListBroadcastsQuery = QueryOf<'listBroadcasts'>;
export type ListInboundMessagesQuery = QueryOf<'listInboundMessages'>;
export type ListTemplatesQuery = QueryOf<'listTemplates'>;
export type ListSuppressionsQuery = QueryOf<'listSuppressions'>;
export type GetUsageQuery = QueryOf<'getUsage'>;

export type Message = Schemas['Message'];
export type MessagePage = Schemas['MessagePage'];
export type SendAck = Schemas['SendAck'];
export type BroadcastAck = Schemas['BroadcastAck'];
export type Broadcast = Schemas['Broadcast'];
export type BroadcastPage = Schemas['BroadcastPage'];
export type ChatAccount = Schemas['ChatAccount'];
/** POST /chat-accounts/embedded-signup's body (decision 0076). */
export type SignupRequest = JsonBody<'linkChatAccountBySignup'>;
export type Sender = Schemas['Sender'];
export type InboundMessagePage = Schemas['InboundMessagePage'];
export type InboundMessage = Schemas['InboundMessage'];
export type InboundReadMark = Schemas['InboundReadMark'];
export type InboxFilter = Schemas['InboxFilter'];
export type ForwardingRule = Schemas['ForwardingRule'];
export type Suppression = Schemas['Suppression'];
export type SuppressionPage = Schemas['SuppressionPage'];
export type OptOutKeywords = Schemas['OptOutKeywords'];
export type Usage = Schemas['Usage'];
export type MediaUpload = Schemas['MediaUpload'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointWithSecret = Schemas['WebhookEndpointWithSecret'];
export type WebhookDeliveryPage = Schemas['WebhookDeliveryPage'];
export type Template = Schemas['Template'];
export type TemplatePage = Schemas['TemplatePage'];
export type ListWebhookDeliveriesQuery = QueryOf<'listWebhookDeliveries'>;
export type GetSenderQuery = QueryOf<'getSender'>;
export type MarkInboundReadRequest = NonNullable<JsonBody<'markInboundRead'>>;

// Operator API.
export type CreateCustomerRequest = JsonBody<'createCustomer'>;
export type UpdateCustomerRequest = JsonBody<'updateCustomer'>;
export type LinkChatAccountRequest = JsonBody<'linkChatAccount'>;
export type UpdateChatAccountRequest = JsonBody<'updateChatAccount'>;
export type CreateApiKeyRequest = JsonBody<'createApiKey'>;
export type IngestInboundMessageRequest = JsonBody<'ingestInboundMessage'>;
export type CreatePortalUserRequest = JsonBody<'createPortalUser'>;
export type ListCustomersQuery = QueryOf<'listCustomers'>;
export type GetCustomerUsageQuery = QueryOf<'getCustomerUsage'>;
export type ListCustomerChatAccountsQuery = QueryOf<'listCustomerChatAccounts'>;
export type VerifyQuery = QueryOf<'linkChatAccount'>;
export type Customer = Schemas['Customer'];
export type CustomerPage = Schemas['CustomerPage'];
export type CustomerUsage = Schemas['CustomerUsage'];
export type OperatorChatAccount = Schemas['OperatorChatAccount'];
export type OperatorChatAccountPage = Schemas['OperatorChatAccountPage'];
export type ApiKey = Schemas['ApiKey'];
export type InboundIngested = Schemas['InboundIngested'];
export type RekeyResult = Schemas['RekeyResult'];
export type ProviderSettings = Schemas['ProviderSettings'];
export type PortalUser = Schemas['PortalUser'];
export type PortalUserInvited = Schemas['PortalUserInvited'];
