// Templates with components at creation (decision 0068; the request fields are in
// template-component-fields.ts): the rules JSON Schema cannot say about a header, footer, buttons,
// an authentication template's one-time-password button and a carousel's cards, and the
// provider's components built from them (docs/provider-protocol-2026.md, "Templates with
// components").
import type { Problem } from '../shared/errors.js';
import { COMPONENT_LIMITS as L } from './template-component-fields.js';

type Header = { format: string; text?: string; example?: string; exampleHandle?: string };
type Button = { type: string; text?: string; url?: string; example?: string; phoneNumber?: string };
type Authentication = {
  otpType: string;
  addSecurityRecommendation?: boolean;
  codeExpirationMinutes?: number;
  buttonText?: string;
  autofillText?: string;
  packageName?: string;
  signatureHash?: string;
};
type Card = {
  header: { format: string; exampleHandle: string };
  body: string;
  examples?: { name: string; text: string }[];
  buttons: Button[];
};
export type ComponentRequest = {
  category: string;
  body?: string;
  header?: Header;
  footer?: string;
  buttons?: Button[];
  authentication?: Authentication;
  cards?: Card[];
};

const VARIABLE = /\{\{([^{}]*)\}\}/g;
const variables = (text: string) => [...new Set([...text.matchAll(VARIABLE)].map((m) => m[1]!))];

function headerProblems(h: Header): Problem[] {
  if (h.format !== 'TEXT') {
    const problems: Problem[] = [];
    if (h.exampleHandle === undefined)
      problems.push({ path: 'header.exampleHandle', message: `is required for a ${h.format.toLowerCase()} header` });
    for (const k of ['text', 'example'] as const)
      if (h[k] !== undefined) problems.push({ path: `header.${k}`, message: 'is allowed only for a TEXT header' });
    return problems;
  }
  if (h.text === undefined) return [{ path: 'header.text', message: 'is required for a TEXT header' }];
  const problems: Problem[] = [];
  if (h.exampleHandle !== undefined)
    problems.push({ path: 'header.exampleHandle', message: 'is allowed only for an image, video or document header' });
  const vars = variables(h.text);
  if (vars.length > 1) problems.push({ path: 'header.text', message: 'may have at most one variable' });
  else if (vars.length === 1 && h.example === undefined)
    problems.push({ path: 'header.example', message: `is required: the header has the variable {{${vars[0]}}}` });
  else if (vars.length === 0 && h.example !== undefined)
    problems.push({ path: 'header.example', message: 'is not allowed: the header has no variable' });
  return problems;
}

const isHttps = (url: string) => /^https:\/\/[^\s/?#]+\.[^\s/?#]+[^\s]*$/.test(url);

function buttonProblems(buttons: Button[], path: string): Problem[] {
  const problems: Problem[] = [];
  const counts: Record<string, number> = {};
  buttons.forEach((b, i) => {
    const p = `${path}.${i}`;
    counts[b.type] = (counts[b.type] ?? 0) + 1;
    const allowed: Record<string, string[]> = {
      QUICK_REPLY: ['text'],
      URL: ['text', 'url', 'example'],
      PHONE_NUMBER: ['text', 'phoneNumber'],
      COPY_CODE: ['example'],
    };
    for (const k of ['text', 'url', 'example', 'phoneNumber'] as const) {
      const required =
        (b.type !== 'COPY_CODE' && k === 'text') ||
        (b.type === 'URL' && k === 'url') ||
        (b.type === 'PHONE_NUMBER' && k === 'phoneNumber') ||
        (b.type === 'COPY_CODE' && k === 'example');
      if (required && b[k] === undefined)
        problems.push({ path: `${p}.${k}`, message: `is required for a ${b.type} button` });
      if (b[k] !== undefined && !allowed[b.type]!.includes(k))
        problems.push({ path: `${p}.${k}`, message: `is not allowed for a ${b.type} button` });
    }
    if (b.type === 'URL' && b.url !== undefined) {
      const vars = variables(b.url);
      if (!isHttps(b.url.replace(VARIABLE, 'x'))) problems.push({ path: `${p}.url`, message: 'must be an https URL' });
      else if (vars.length > 1 || (vars.length === 1 && !/\{\{[^{}]*\}\}$/.test(b.url)))
        problems.push({ path: `${p}.url`, message: 'may have one variable, at its end only' });
      else if (vars.length === 1 && b.example === undefined)
        problems.push({ path: `${p}.example`, message: 'is required: the URL has a variable (give the full URL)' });
      else if (vars.length === 0 && b.example !== undefined)
        problems.push({ path: `${p}.example`, message: 'is not allowed: the URL has no variable' });
    }
    if (b.type === 'PHONE_NUMBER' && b.phoneNumber !== undefined && !/^\+[1-9]\d{6,14}$/.test(b.phoneNumber))
      problems.push({ path: `${p}.phoneNumber`, message: 'must be E.164: + followed by 7 to 15 digits' });
    if (b.type === 'COPY_CODE' && b.example !== undefined && [...b.example].length > L.copyCodeExample)
      problems.push({ path: `${p}.example`, message: `must be at most ${L.copyCodeExample} characters` });
  });
  const most: [string, number][] = [
    ['URL', L.urlButtons],
    ['PHONE_NUMBER', L.phoneButtons],
    ['COPY_CODE', L.copyCodeButtons],
  ];
  for (const [type, max] of most)
    if ((counts[type] ?? 0) > max)
      problems.push({ path, message: `may have at most ${max} ${type} button${max === 1 ? '' : 's'}` });
  return problems;
}

function cardProblems(cards: Card[]): Problem[] {
  const problems: Problem[] = [];
  const shape = (c: Card) => `${c.header.format}:${c.buttons.map((b) => b.type).join(',')}`;
  cards.forEach((c, i) => {
    problems.push(...buttonProblems(c.buttons, `cards.${i}.buttons`));
    if (i > 0 && shape(c) !== shape(cards[0]!))
      problems.push({
        path: `cards.${i}`,
        message: 'must have the header format and buttons (kinds, in order) of card 0',
      });
    const vars = variables(c.body);
    const given = new Set((c.examples ?? []).map((e) => e.name));
    const missing = vars.filter((v) => !given.has(v));
    if (missing.length > 0)
      problems.push({
        path: `cards.${i}.examples`,
        message: `must give one example per variable; missing ${missing.map((v) => `{{${v}}}`).join(', ')}`,
      });
    (c.examples ?? []).forEach((e, j) => {
      if (!vars.includes(e.name))
        problems.push({ path: `cards.${i}.examples.${j}.name`, message: 'is not a variable of the card body' });
    });
  });
  return problems;
}

/** The rules of the component fields; `body` problems are the caller's (template-definition.ts). */
export function componentProblems(req: ComponentRequest): Problem[] {
  const problems: Problem[] = [];
  if (req.category === 'AUTHENTICATION') {
    if (req.authentication === undefined)
      problems.push({ path: 'authentication', message: 'is required when category is AUTHENTICATION' });
    for (const k of ['body', 'header', 'footer', 'buttons', 'cards'] as const)
      if (req[k] !== undefined)
        problems.push({
          path: k,
          message: "is not allowed when category is AUTHENTICATION: the provider's preset text is used",
        });
    const a = req.authentication;
    if (a?.otpType === 'ONE_TAP') {
      for (const k of ['packageName', 'signatureHash'] as const)
        if (a[k] === undefined)
          problems.push({ path: `authentication.${k}`, message: 'is required for a ONE_TAP button' });
    } else if (a) {
      for (const k of ['autofillText', 'packageName', 'signatureHash'] as const)
        if (a[k] !== undefined)
          problems.push({ path: `authentication.${k}`, message: 'is allowed only for a ONE_TAP button' });
    }
    return problems;
  }
  if (req.authentication !== undefined)
    problems.push({ path: 'authentication', message: 'is allowed only when category is AUTHENTICATION' });
  if (req.body === undefined) problems.push({ path: 'body', message: 'is required' });
  if (req.header) problems.push(...headerProblems(req.header));
  if (req.buttons) problems.push(...buttonProblems(req.buttons, 'buttons'));
  if (req.cards) {
    for (const k of ['header', 'footer', 'buttons'] as const)
      if (req[k] !== undefined) problems.push({ path: k, message: 'is not allowed with cards: each card has its own' });
    problems.push(...cardProblems(req.cards));
  }
  return problems;
}

const buttonComponent = (b: Button) =>
  b.type === 'QUICK_REPLY'
    ? { type: 'QUICK_REPLY', text: b.text }
    : b.type === 'URL'
      ? { type: 'URL', text: b.text, url: b.url, ...(b.example !== undefined ? { example: [b.example] } : {}) }
      : b.type === 'PHONE_NUMBER'
        ? { type: 'PHONE_NUMBER', text: b.text, phone_number: b.phoneNumber }
        : { type: 'COPY_CODE', example: b.example };

/** A card body's example in the provider's positional form. */
function cardBody(c: Card) {
  const vars = variables(c.body);
  if (vars.length === 0) return { type: 'BODY', text: c.body };
  const ordered = [...vars].sort((a, b) => Number(a) - Number(b));
  const example = (v: string) => c.examples?.find((e) => e.name === v)?.text ?? '';
  return { type: 'BODY', text: c.body, example: { body_text: [ordered.map(example)] } };
}

/** The provider's components of an AUTHENTICATION template. */
export function authenticationComponents(a: Authentication): Record<string, unknown>[] {
  const otp =
    a.otpType === 'ONE_TAP'
      ? {
          type: 'OTP',
          otp_type: 'ONE_TAP',
          ...(a.buttonText ? { text: a.buttonText } : {}),
          ...(a.autofillText ? { autofill_text: a.autofillText } : {}),
          supported_apps: [{ package_name: a.packageName, signature_hash: a.signatureHash }],
        }
      : { type: 'OTP', otp_type: 'COPY_CODE', ...(a.buttonText ? { text: a.buttonText } : {}) };
  return [
    { type: 'BODY', add_security_recommendation: a.addSecurityRecommendation === true },
    ...(a.codeExpirationMinutes !== undefined
      ? [{ type: 'FOOTER', code_expiration_minutes: a.codeExpirationMinutes }]
      : []),
    { type: 'BUTTONS', buttons: [otp] },
  ];
}

/** The header, footer, buttons and carousel components around a BODY (checked definitions only). */
export function aroundBody(
  req: ComponentRequest,
  named: boolean,
  body: Record<string, unknown>,
): Record<string, unknown>[] {
  const h = req.header;
  const headerVar = h?.text !== undefined ? variables(h.text)[0] : undefined;
  const header = !h
    ? []
    : h.format !== 'TEXT'
      ? [{ type: 'HEADER', format: h.format, example: { header_handle: [h.exampleHandle] } }]
      : [
          {
            type: 'HEADER',
            format: 'TEXT',
            text: h.text,
            ...(headerVar !== undefined
              ? {
                  example: named
                    ? { header_text_named_params: [{ param_name: headerVar, example: h.example }] }
                    : { header_text: [h.example] },
                }
              : {}),
          },
        ];
  const carousel = req.cards
    ? [
        {
          type: 'CAROUSEL',
          cards: req.cards.map((c) => ({
            components: [
              { type: 'HEADER', format: c.header.format, example: { header_handle: [c.header.exampleHandle] } },
              cardBody(c),
              { type: 'BUTTONS', buttons: c.buttons.map(buttonComponent) },
            ],
          })),
        },
      ]
    : [];
  return [
    ...header,
    body,
    ...(req.footer !== undefined ? [{ type: 'FOOTER', text: req.footer }] : []),
    ...(req.buttons ? [{ type: 'BUTTONS', buttons: req.buttons.map(buttonComponent) }] : []),
    ...carousel,
  ];
}
