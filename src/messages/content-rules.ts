// The rules on a content's kind that JSON Schema cannot say: url xor mediaId and URL safety for
// every file, caption only where the provider shows one, and the interactive message's rules
// across fields (its parts for its type, unique ids, rows counted over all sections). Each
// problem names its path; the request's schema reports types and lengths.
import { checkOutboundUrl } from '../outbound/address-guard.js';
import { CAPTIONED_KINDS, isMediaKind } from '../shared/content.js';
import type { Problem } from '../shared/errors.js';
import { EMOJI_MAX, FLOW_LIMITS, INTERACTIVE_LIMITS } from './content-kinds.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

type Opts = { allowPrivateUrls: boolean };

/** A file given by URL or by upload: exactly one of the two, and a URL we may fetch. */
function mediaRefProblems(media: unknown, path: string, opts: Opts): Problem[] {
  if (!isObject(media)) return [];
  const problems: Problem[] = [];
  if ((media.url !== undefined) === (media.mediaId !== undefined))
    problems.push({ path, message: 'must have exactly one of url or mediaId' });
  if (typeof media.url === 'string' && media.url.length <= 2048) {
    const reason = checkOutboundUrl(media.url, { allowPrivate: opts.allowPrivateUrls });
    if (reason !== null) problems.push({ path: `${path}.url`, message: reason });
  }
  return problems;
}

/** The rules of `content` for its `type` (a known content type). */
export function contentKindProblems(content: Record<string, unknown>, type: string, opts: Opts): Problem[] {
  const problems: Problem[] = [];
  if (content.caption !== undefined && !CAPTIONED_KINDS.includes(type))
    problems.push({ path: 'content.caption', message: 'is allowed only for image, document and video content' });
  if (isMediaKind(type)) problems.push(...mediaRefProblems(content[type], `content.${type}`, opts));
  if (type === 'interactive' && isObject(content.interactive))
    problems.push(...interactiveProblems(content.interactive, opts));
  if (type === 'reaction' && isObject(content.reaction)) problems.push(...reactionProblems(content.reaction));
  if (type === 'template' && isObject(content.template) && isObject(content.template.components))
    problems.push(...templateComponentProblems(content.template.components, 'content.template.components', opts));
  return problems;
}

/**
 * A template send's files: the header's by url or upload, each card's by url (decision 0068).
 * Also usable for a broadcast recipient's own components (its path given).
 */
export function templateComponentProblems(c: Record<string, unknown>, path: string, opts: Opts): Problem[] {
  const problems: Problem[] = [];
  if (isObject(c.headerMedia)) problems.push(...mediaRefProblems(c.headerMedia, `${path}.headerMedia`, opts));
  if (c.headerMedia !== undefined && c.header !== undefined)
    problems.push({ path: `${path}.header`, message: 'is not allowed with headerMedia: a header is text or a file' });
  if (Array.isArray(c.cards))
    c.cards.forEach((card, i) => {
      if (!isObject(card) || !isObject(card.headerMedia)) return;
      const p = `${path}.cards.${i}.headerMedia`;
      if (card.headerMedia.url === undefined)
        problems.push({ path: `${p}.url`, message: 'is required: a card takes its file by url' });
      else problems.push(...mediaRefProblems(card.headerMedia, p, opts));
    });
  return problems;
}

/** The part each interactive type needs, and only that one. */
const PART_OF: Record<string, string> = { button: 'buttons', list: 'list', cta_url: 'ctaUrl', flow: 'flow' };

function interactiveProblems(i: Record<string, unknown>, opts: Opts): Problem[] {
  const path = 'content.interactive';
  const problems: Problem[] = [];
  const type = typeof i.type === 'string' && i.type in PART_OF ? i.type : null;
  if (type !== null)
    for (const [t, part] of Object.entries(PART_OF)) {
      if (t === type && i[part] === undefined)
        problems.push({ path: `${path}.${part}`, message: `is required when interactive.type is ${type}` });
      if (t !== type && i[part] !== undefined)
        problems.push({ path: `${path}.${part}`, message: `is not allowed when interactive.type is ${type}` });
    }
  if (isObject(i.header)) problems.push(...headerProblems(i.header, type, opts));
  if (Array.isArray(i.buttons)) problems.push(...duplicates(i.buttons, 'id', (k) => `${path}.buttons.${k}.id`));
  if (isObject(i.list) && Array.isArray(i.list.sections)) problems.push(...listProblems(i.list.sections));
  if (isObject(i.ctaUrl) && typeof i.ctaUrl.url === 'string' && !isHttpsUrl(i.ctaUrl.url))
    problems.push({ path: `${path}.ctaUrl.url`, message: 'must be an https URL' });
  if (isObject(i.flow)) problems.push(...flowProblems(i.flow));
  return problems;
}

const EMOJI_ANYWHERE = /\p{Extended_Pictographic}|\p{Regional_Indicator}/u;

/**
 * A flow message (decision 0075): the Flow by id or by name, the screen to open when it navigates
 * and none when it exchanges data, the screen's data a non-empty object of bounded size, no emoji
 * in the button (the provider's reference says it takes none).
 */
function flowProblems(f: Record<string, unknown>): Problem[] {
  const path = 'content.interactive.flow';
  const problems: Problem[] = [];
  if ((f.flowId !== undefined) === (f.flowName !== undefined))
    problems.push({ path, message: 'must have exactly one of flowId or flowName' });
  if (typeof f.cta === 'string' && EMOJI_ANYWHERE.test(f.cta))
    problems.push({ path: `${path}.cta`, message: 'must not contain emoji (the provider refuses them here)' });
  const action = f.action ?? 'navigate';
  if (action === 'navigate' && f.actionPayload === undefined)
    problems.push({ path: `${path}.actionPayload`, message: 'is required when flow.action is navigate (its screen)' });
  if (action === 'data_exchange' && f.actionPayload !== undefined)
    problems.push({ path: `${path}.actionPayload`, message: 'is not allowed when flow.action is data_exchange' });
  const payload = isObject(f.actionPayload) ? f.actionPayload : null;
  if (payload !== null && isObject(payload.data)) {
    if (Object.keys(payload.data).length === 0)
      problems.push({ path: `${path}.actionPayload.data`, message: 'must not be empty (leave it out instead)' });
    else if (JSON.stringify(payload.data).length > FLOW_LIMITS.dataJson)
      problems.push({
        path: `${path}.actionPayload.data`,
        message: `must be at most ${FLOW_LIMITS.dataJson} characters as JSON`,
      });
  }
  return problems;
}

function headerProblems(h: Record<string, unknown>, type: string | null, opts: Opts): Problem[] {
  const path = 'content.interactive.header';
  const problems: Problem[] = [];
  const kind = typeof h.type === 'string' ? h.type : null;
  // The provider takes only a text header on a list.
  if (type === 'list' && kind !== null && kind !== 'text')
    problems.push({ path: `${path}.type`, message: 'must be text when interactive.type is list' });
  for (const part of ['text', 'image', 'video', 'document']) {
    if (part === kind && h[part] === undefined)
      problems.push({ path: `${path}.${part}`, message: `is required when header.type is ${kind}` });
    if (part !== kind && h[part] !== undefined)
      problems.push({ path: `${path}.${part}`, message: `is not allowed when header.type is ${kind}` });
  }
  if (kind !== null && isMediaKind(kind)) problems.push(...mediaRefProblems(h[kind], `${path}.${kind}`, opts));
  return problems;
}

/** At most INTERACTIVE_LIMITS.rowsTotal rows over all sections, unique row ids, titled sections when several. */
function listProblems(sections: unknown[]): Problem[] {
  const path = 'content.interactive.list.sections';
  const problems: Problem[] = [];
  const rows: { id: unknown; at: string }[] = [];
  sections.forEach((s, i) => {
    if (!isObject(s)) return;
    if (sections.length > 1 && s.title === undefined)
      problems.push({ path: `${path}.${i}.title`, message: 'is required when the list has more than one section' });
    if (Array.isArray(s.rows))
      s.rows.forEach((r, j) => rows.push({ id: isObject(r) ? r.id : undefined, at: `${path}.${i}.rows.${j}` }));
  });
  if (rows.length > INTERACTIVE_LIMITS.rowsTotal)
    problems.push({
      path,
      message: `must have at most ${INTERACTIVE_LIMITS.rowsTotal} rows in all sections together (this list has ${rows.length})`,
    });
  const seen = new Map<unknown, string>();
  for (const r of rows) {
    if (typeof r.id !== 'string') continue;
    const first = seen.get(r.id);
    if (first === undefined) seen.set(r.id, r.at);
    else problems.push({ path: `${r.at}.id`, message: `duplicates ${first}.id (row ids must be unique)` });
  }
  return problems;
}

function duplicates(items: unknown[], key: string, at: (index: number) => string): Problem[] {
  const seen = new Map<unknown, number>();
  const problems: Problem[] = [];
  items.forEach((item, k) => {
    const v = isObject(item) ? item[key] : undefined;
    if (typeof v !== 'string') return;
    const first = seen.get(v);
    if (first === undefined) seen.set(v, k);
    else problems.push({ path: at(k), message: `duplicates ${at(first)} (ids must be unique)` });
  });
  return problems;
}

function isHttpsUrl(s: string): boolean {
  try {
    return new URL(s).protocol === 'https:';
  } catch {
    return false;
  }
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const EMOJI = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20e3/u;

/** One emoji (one grapheme that is an emoji), or empty to remove the reaction. */
export function isReactionEmoji(s: string): boolean {
  if (s === '') return true;
  if (s.length > EMOJI_MAX) return false;
  const graphemes = [...segmenter.segment(s)];
  return graphemes.length === 1 && EMOJI.test(s);
}

/** A reference to an earlier message (replyTo, a reaction's target) names it exactly one way. */
export function messageRefProblems(ref: Record<string, unknown>, path: string): Problem[] {
  const given = ['messageId', 'externalId', 'inboundMessageId'].filter((k) => ref[k] !== undefined);
  return given.length === 1
    ? []
    : [{ path, message: 'must have exactly one of messageId, externalId or inboundMessageId' }];
}

function reactionProblems(r: Record<string, unknown>): Problem[] {
  const problems = messageRefProblems(r, 'content.reaction');
  if (typeof r.emoji === 'string' && !isReactionEmoji(r.emoji))
    problems.push({ path: 'content.reaction.emoji', message: 'must be one emoji, or empty to remove the reaction' });
  return problems;
}
