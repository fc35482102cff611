// The provider's checks on a template definition at creation (POST /{waba-id}/message_templates),
// as its template components reference describes them: the body and its examples, a header (text
// with at most one variable, or a file by its upload handle), a footer, buttons, a carousel's cards
// and an authentication template's one-time-password button (docs/provider-protocol-2026.md,
// "Templates with components"). Refusals are the provider's code 100 with its subcodes.
import type { EmulatedTemplate } from './emulator-state.js';
import { graphError } from './graph-error.js';

const CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'];
const variablesOf = (text: string) => [...text.matchAll(/\{\{([^{}]*)\}\}/g)].map((m) => m[1]!);

type Invalid = (title: string, subcode?: number) => ReturnType<typeof graphError>;

/** The provider's checks on a definition; null when it is acceptable. */
export function checkDefinition(body: Record<string, unknown>, existing: EmulatedTemplate[]) {
  const { name, language, category } = body;
  const invalid: Invalid = (title, subcode) => graphError(100, 'Invalid parameter', subcode, { title, message: title });
  if (typeof name !== 'string' || !/^[a-z0-9_]{1,512}$/.test(name)) return invalid('Invalid template name');
  if (typeof language !== 'string' || language === '') return invalid('Invalid language');
  if (typeof category !== 'string' || !CATEGORIES.includes(category)) return invalid('Invalid category');
  const components = Array.isArray(body.components) ? (body.components as Record<string, unknown>[]) : [];
  const problem =
    category === 'AUTHENTICATION'
      ? checkAuthentication(components, invalid)
      : (checkBody(components, body.parameter_format === 'NAMED', invalid) ?? checkComponents(components, invalid));
  if (problem) return problem;
  if (existing.some((t) => t.name === name && t.language === language)) {
    return graphError(100, 'Invalid parameter', 2388024, {
      title: 'Content in this language already exists',
      message: 'Content in this language already exists',
    });
  }
  return null;
}

function checkBody(components: Record<string, unknown>[], named: boolean, invalid: Invalid) {
  const main = components.find((c) => c?.type === 'BODY');
  if (!main || typeof main.text !== 'string' || main.text === '') return invalid('Body is required');
  const text = main.text.trim();
  if (/^\{\{[^{}]*\}\}/.test(text) || /\{\{[^{}]*\}\}$/.test(text))
    return invalid("Variables can't be at the start or end of the template", 2388299);
  const vars = [...new Set(variablesOf(text))];
  const example = (main.example ?? {}) as {
    body_text?: string[][];
    body_text_named_params?: { param_name: string; example: string }[];
  };
  const covered = named
    ? vars.every((v) => example.body_text_named_params?.some((p) => p.param_name === v))
    : (example.body_text?.[0]?.length ?? 0) >= vars.length;
  if (!covered) return invalid('Missing examples for template variables', 2388043);
  return null;
}

/** Header, footer, buttons and carousel (template components reference); null when acceptable. */
function checkComponents(components: Record<string, unknown>[], invalid: Invalid): ReturnType<Invalid> | null {
  const header = components.find((c) => c?.type === 'HEADER');
  if (header) {
    const ex = (header.example ?? {}) as {
      header_text?: unknown[];
      header_text_named_params?: unknown[];
      header_handle?: unknown[];
    };
    if (header.format === 'TEXT') {
      const vars = variablesOf(String(header.text ?? ''));
      if (typeof header.text !== 'string' || header.text.length > 60 || vars.length > 1)
        return invalid('Message header format is incorrect', 2388047);
      if (vars.length === 1 && !ex.header_text?.length && !ex.header_text_named_params?.length)
        return invalid('Missing examples for template variables', 2388043);
    } else if (['IMAGE', 'VIDEO', 'DOCUMENT'].includes(String(header.format))) {
      if (!ex.header_handle?.length) return invalid('Message header format is incorrect', 2388047);
    } else return invalid('Message header format is incorrect', 2388047);
  }
  const footer = components.find((c) => c?.type === 'FOOTER');
  if (footer && (typeof footer.text !== 'string' || footer.text.length > 60))
    return invalid('Message footer format is incorrect', 2388073);
  const buttons = components.find((c) => c?.type === 'BUTTONS');
  if (buttons) {
    const list = Array.isArray(buttons.buttons) ? (buttons.buttons as Record<string, unknown>[]) : [];
    if (list.length === 0 || list.length > 10 || list.some((b) => !buttonAcceptable(b)))
      return invalid('Invalid buttons', 2388158);
  }
  const carousel = components.find((c) => c?.type === 'CAROUSEL');
  if (carousel) {
    const cards = Array.isArray(carousel.cards) ? (carousel.cards as { components?: Record<string, unknown>[] }[]) : [];
    if (cards.length < 1 || cards.length > 10) return invalid('Invalid carousel: 1 to 10 cards', 2388158);
    for (const card of cards) {
      const parts = card.components ?? [];
      const h = parts.find((c) => c?.type === 'HEADER');
      if (!h || !['IMAGE', 'VIDEO'].includes(String(h.format)))
        return invalid('Message header format is incorrect', 2388047);
      const problem = checkBody(parts, false, invalid) ?? checkComponents(parts, invalid);
      if (problem) return problem;
    }
  }
  return null;
}

function buttonAcceptable(b: Record<string, unknown>): boolean {
  const text = typeof b.text === 'string' && b.text.length > 0 && b.text.length <= 25;
  switch (b.type) {
    case 'QUICK_REPLY':
      return text;
    case 'URL': {
      const vars = variablesOf(String(b.url ?? ''));
      return (
        text &&
        /^https:\/\//.test(String(b.url)) &&
        (vars.length === 0 || (Array.isArray(b.example) && b.example.length > 0))
      );
    }
    case 'PHONE_NUMBER':
      return text && /^\+?\d{7,15}$/.test(String(b.phone_number ?? ''));
    case 'COPY_CODE':
      return typeof b.example === 'string' && b.example.length > 0 && b.example.length <= 15;
    default:
      return false;
  }
}

/** An AUTHENTICATION definition: the preset body and one one-time-password button. */
function checkAuthentication(components: Record<string, unknown>[], invalid: Invalid) {
  const otp = (components.find((c) => c?.type === 'BUTTONS')?.buttons as Record<string, unknown>[] | undefined)?.[0];
  if (!otp || otp.type !== 'OTP' || !['COPY_CODE', 'ONE_TAP'].includes(String(otp.otp_type)))
    return invalid('Authentication templates need one OTP button (COPY_CODE or ONE_TAP)', 2388158);
  const apps = otp.supported_apps as { package_name?: unknown; signature_hash?: unknown }[] | undefined;
  if (otp.otp_type === 'ONE_TAP' && !apps?.every((a) => a.package_name && a.signature_hash))
    return invalid('One-tap buttons need the package name and signature hash of the app', 2388158);
  if (components.some((c) => c?.type === 'BODY' && c.text !== undefined))
    return invalid("Authentication templates use the provider's preset body text", 2388072);
  return null;
}

/** An AUTHENTICATION template as the provider keeps it: its preset texts filled in. */
export function presetAuthentication(components: Record<string, unknown>[]): Record<string, unknown>[] {
  return components.map((c) => {
    if (c.type === 'BODY')
      return {
        type: 'BODY',
        text: `*{{1}}* is your verification code.${c.add_security_recommendation ? ' For your security, do not share this code.' : ''}`,
        add_security_recommendation: c.add_security_recommendation === true,
      };
    if (c.type === 'FOOTER')
      return { ...c, text: `This code expires in ${String(c.code_expiration_minutes)} minutes.` };
    if (c.type === 'BUTTONS')
      return {
        type: 'BUTTONS',
        buttons: (c.buttons as Record<string, unknown>[]).map((b) => ({
          ...b,
          text: b.text ?? (b.otp_type === 'ONE_TAP' ? 'Autofill' : 'Copy code'),
        })),
      };
    return c;
  });
}
