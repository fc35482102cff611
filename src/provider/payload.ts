// Our message content → the provider's send payload. Our messageId rides in
// biz_opaque_callback_data so every status receipt can be matched even before the send's
// answer is saved.

export type SendContent = {
  type: 'text' | 'template' | 'image' | 'document';
  text?: string;
  template?: { name: string; language: string; components?: { body?: string[]; header?: string[] } };
  image?: { url?: string; mediaId?: string };
  document?: { url?: string; mediaId?: string; filename?: string };
  caption?: string;
};

/** What the worker resolved a message's media to at the provider (see dispatch/prepare-media.ts). */
export type ProviderMediaRef = { id: string; filename?: string };

/** The last path segment of a URL, decoded when it can be (a bad %-escape keeps it as is). */
export function lastUrlSegment(url: string): string | undefined {
  const segment = new URL(url).pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(segment) || undefined;
  } catch {
    return segment || undefined;
  }
}

const textParams = (values: string[]) => values.map((text) => ({ type: 'text', text }));

/** Media go by provider media id once the worker uploaded them, else by link (the provider fetches the URL). */
function mediaObject(ref: { url?: string; providerMediaId?: string }, extra: Record<string, string | undefined>) {
  const base = ref.providerMediaId !== undefined ? { id: ref.providerMediaId } : { link: ref.url };
  return Object.fromEntries(Object.entries({ ...base, ...extra }).filter(([, v]) => v !== undefined));
}

export function buildSendPayload(
  to: string,
  content: SendContent,
  messageId: string,
  providerMedia?: ProviderMediaRef | null,
): Record<string, unknown> {
  const providerMediaId = providerMedia?.id;
  const envelope = {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: to.replace(/^\+/, ''),
    biz_opaque_callback_data: messageId,
  };
  switch (content.type) {
    case 'text':
      return { ...envelope, type: 'text', text: { preview_url: false, body: content.text ?? '' } };
    case 'template': {
      const t = content.template!;
      const components = [
        ...(t.components?.header?.length ? [{ type: 'header', parameters: textParams(t.components.header) }] : []),
        ...(t.components?.body?.length ? [{ type: 'body', parameters: textParams(t.components.body) }] : []),
      ];
      return {
        ...envelope,
        type: 'template',
        template: { name: t.name, language: { code: t.language }, ...(components.length ? { components } : {}) },
      };
    }
    case 'image':
      return {
        ...envelope,
        type: 'image',
        image: mediaObject({ url: content.image?.url, providerMediaId }, { caption: content.caption }),
      };
    case 'document': {
      const d = content.document ?? {};
      const filename = d.filename ?? providerMedia?.filename ?? (d.url ? lastUrlSegment(d.url) : undefined);
      return {
        ...envelope,
        type: 'document',
        document: mediaObject({ url: d.url, providerMediaId }, { caption: content.caption, filename }),
      };
    }
  }
}

/** Marks a received message read; `typing` adds the typing indicator (shown up to 25 s or until our reply). */
export function readPayload(providerMessageId: string, typing: boolean): Record<string, unknown> {
  return {
    messaging_product: 'whatsapp',
    status: 'read',
    message_id: providerMessageId,
    ...(typing ? { typing_indicator: { type: 'text' } } : {}),
  };
}
