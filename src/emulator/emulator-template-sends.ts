// A template send checked against the emulated catalog of the number's WABA, as the provider
// checks it (docs/provider-protocol-2026.md, "Templates with components"): the parameters of the
// header, body, each button and each carousel card against the approved definition. A count that
// does not match is refused with 132000 ("Number of parameters does not match the expected number
// of params", its details naming the component as the provider's do); a parameter of the wrong
// kind (a text where the header is an image, a button's sub_type) with 132012. A template the
// catalog does not hold is left alone, as before: tests send unseeded templates freely. Written on
// its own, not from the service's code (src/templates/template-send.ts), so that each checks the other.
import type { EmulatedTemplate } from './emulator-state.js';
import { graphError } from './graph-error.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
const up = (v: unknown) => String(v ?? '').toUpperCase();
const varCount = (text: unknown) =>
  new Set([...String(text ?? '').matchAll(/\{\{([^{}]*)\}\}/g)].map((m) => m[1])).size;

class Refusal extends Error {
  constructor(
    readonly code: 132000 | 132012,
    readonly details: string,
  ) {
    super(details);
  }
}
const countMismatch = (where: string, got: number, expected: number) =>
  new Refusal(
    132000,
    `${where}: number of localizable_params (${got}) does not match the expected number of params (${expected})`,
  );

/** The sub_type a definition's button takes at send time, and whether its parameter is required. */
function buttonRule(b: Obj): { subType: string | null; required: boolean } {
  switch (up(b.type)) {
    case 'QUICK_REPLY':
      return { subType: 'quick_reply', required: false };
    case 'COPY_CODE':
      return { subType: 'copy_code', required: true };
    case 'OTP': // an authentication template's code button: sent as a url button with the code
      return { subType: 'url', required: true };
    case 'URL':
      return varCount(b.url) > 0 ? { subType: 'url', required: true } : { subType: null, required: false };
    default:
      return { subType: null, required: false };
  }
}

/** One level of components (the template's, or a card's) against the sent ones. */
function checkLevel(definition: Obj[], sent: Obj[], prefix: string) {
  const def = (type: string) => definition.find((c) => up(c.type) === type);
  const got = (type: string) => sent.filter((c) => up(c.type) === type);
  const header = def('HEADER');
  const sentHeader = list(got('HEADER')[0]?.parameters);
  const format = header ? up(header.format) || 'TEXT' : null;
  if (format === 'TEXT' || format === null) {
    const expected = format === 'TEXT' ? varCount(header!.text) : 0;
    if (sentHeader.length !== expected) throw countMismatch(`${prefix}header`, sentHeader.length, expected);
    const wrong = sentHeader.find((p) => p.type !== 'text');
    if (wrong) throw new Refusal(132012, `${prefix}header: Format mismatch, expected TEXT, received ${up(wrong.type)}`);
  } else {
    if (sentHeader.length !== 1) throw countMismatch(`${prefix}header`, sentHeader.length, 1);
    if (up(sentHeader[0]!.type) !== format)
      throw new Refusal(
        132012,
        `${prefix}header: Format mismatch, expected ${format}, received ${up(sentHeader[0]!.type)}`,
      );
  }
  const body = list(got('BODY')[0]?.parameters);
  const expectedBody = varCount(def('BODY')?.text);
  if (body.length !== expectedBody) throw countMismatch(`${prefix}body`, body.length, expectedBody);

  const buttons = list(def('BUTTONS')?.buttons);
  const given = new Map<number, Obj>();
  for (const b of got('BUTTON')) {
    const index = Number(b.index);
    const button = buttons[index];
    if (!Number.isInteger(index) || !button)
      throw new Refusal(132000, `${prefix}button at index ${String(b.index)}: the template has no such button`);
    const rule = buttonRule(button);
    if (rule.subType === null || up(b.sub_type) !== up(rule.subType))
      throw new Refusal(
        132012,
        `${prefix}button at index ${index}: sub_type ${String(b.sub_type)} does not match the ${up(button.type)} button of the template`,
      );
    const params = list(b.parameters);
    if (params.length !== 1) throw countMismatch(`${prefix}button at index ${index}`, params.length, 1);
    given.set(index, b);
  }
  buttons.forEach((b, index) => {
    if (buttonRule(b).required && !given.has(index)) throw countMismatch(`${prefix}button at index ${index}`, 0, 1);
  });

  const carousel = def('CAROUSEL');
  const sentCarousel = got('CAROUSEL')[0];
  if (!carousel) {
    if (sentCarousel) throw new Refusal(132000, `${prefix}carousel: the template has no carousel`);
    return;
  }
  const cards = list(carousel.cards);
  const sentCards = list(sentCarousel?.cards);
  if (sentCards.length !== cards.length) throw countMismatch('carousel cards', sentCards.length, cards.length);
  cards.forEach((card, i) => {
    const sentCard = sentCards.find((c) => Number(c.card_index) === i);
    if (!sentCard) throw new Refusal(132000, `card ${i}: missing from the carousel`);
    checkLevel(list(card.components), list(sentCard.components), `card ${i} `);
  });
}

/** The provider's refusal of a template send that does not fit its definition, or null. */
export function templateSendRefusal(template: EmulatedTemplate, payload: Obj) {
  const t = isObj(payload.template) ? payload.template : {};
  try {
    checkLevel(list(template.components), list(t.components), '');
    return null;
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    return withDetails(err);
  }
}

function withDetails(err: Refusal) {
  const body = graphError(
    err.code,
    err.code === 132000
      ? 'Number of parameters does not match the expected number of params'
      : 'Parameter format does not match format in the created template',
  );
  body.error.error_data.details = err.details;
  return body;
}
