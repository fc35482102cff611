// A template send's parameters (content.template.components) and their check against the
// template as the provider's catalog holds it (decision 0068): the header's format and variables,
// the body's variables, the buttons by index and kind, the cards of a carousel. A send that does
// not fit its template is refused at accept with one problem per path, so that it never reaches
// the provider (which would answer 132000 or 132012). Also the filled text of a template, for
// the portal's preview.
import type { Problem } from '../shared/errors.js';
import {
  type TemplateButtonValue as ButtonValue,
  type TemplateComponents,
  type TemplateVariant,
} from '../shared/template-parameters.js';
import type { TemplateCatalog } from './template-catalog.js';
import { variablesOf } from './template-definition.js';

type Component = Record<string, unknown>;
const upper = (v: unknown) => (typeof v === 'string' ? v.toUpperCase() : '');
const componentOf = (components: Component[], type: string) => components.find((c) => upper(c.type) === type);
const textOf = (c: Component | undefined) => (typeof c?.text === 'string' ? c.text : '');
const countOf = (text: string) => variablesOf(text).length;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** What one catalog button takes at send time: its sub_type, and whether a value is required. */
export function buttonNeed(button: Component): { subType: string | null; required: boolean; kind: string } {
  const kind = upper(button.type);
  const url = typeof button.url === 'string' ? button.url : '';
  if (kind === 'QUICK_REPLY') return { subType: 'quick_reply', required: false, kind: 'quick reply' };
  if (kind === 'COPY_CODE') return { subType: 'copy_code', required: true, kind: 'copy code' };
  // The one-time password of an authentication template, as created (OTP) or as the catalog lists it (URL).
  if (kind === 'OTP') return { subType: 'url', required: true, kind: 'one-time password' };
  if (kind === 'URL')
    return countOf(url) > 0
      ? { subType: 'url', required: true, kind: 'URL with a variable' }
      : { subType: null, required: false, kind: 'URL without a variable' };
  if (kind === 'PHONE_NUMBER') return { subType: null, required: false, kind: 'phone number' };
  return { subType: null, required: false, kind: kind.toLowerCase().replace(/_/g, ' ') || 'unknown' };
}

const buttonsOf = (components: Component[]): Component[] => {
  const b = componentOf(components, 'BUTTONS')?.buttons;
  return Array.isArray(b) ? (b.filter((x) => typeof x === 'object' && x !== null) as Component[]) : [];
};

function valuesProblem(path: string, given: string[] | undefined, expected: number, what: string): Problem[] {
  const n = given?.length ?? 0;
  if (n === expected) return [];
  return [
    {
      path,
      message:
        expected === 0
          ? `is not allowed: the template's ${what} has no variables`
          : `has ${plural(n, 'value')}; the template's ${what} has ${plural(expected, 'variable')}`,
    },
  ];
}

function buttonProblems(path: string, given: ButtonValue[] | undefined, catalog: Component[]): Problem[] {
  const problems: Problem[] = [];
  const seen = new Set<number>();
  (given ?? []).forEach((b, i) => {
    const p = `${path}.${i}`;
    const button = catalog[b.index];
    if (seen.has(b.index)) problems.push({ path: `${p}.index`, message: 'names a button given already' });
    seen.add(b.index);
    if (!button) {
      problems.push({
        path: `${p}.index`,
        message: `has no button in the template (it has ${plural(catalog.length, 'button')}, from index 0)`,
      });
      return;
    }
    const need = buttonNeed(button);
    if (need.subType === null)
      problems.push({
        path: p,
        message: `is not allowed: button ${b.index} (${need.kind}) takes no value`,
      });
    else if (need.subType !== b.subType)
      problems.push({
        path: `${p}.subType`,
        message: `must be ${need.subType}: button ${b.index} is a ${need.kind} button`,
      });
  });
  catalog.forEach((button, index) => {
    const need = buttonNeed(button);
    if (need.required && !seen.has(index))
      problems.push({
        path,
        message: `must give a value for button ${index} (${need.kind}, subType ${need.subType})`,
      });
  });
  return problems;
}

function headerProblems(base: string, given: TemplateComponents | undefined, header: Component | undefined): Problem[] {
  const format = header ? upper(header.format) || 'TEXT' : null;
  const media = given?.headerMedia;
  if (format === 'IMAGE' || format === 'VIDEO' || format === 'DOCUMENT') {
    const problems: Problem[] = [];
    if (given?.header !== undefined)
      problems.push({
        path: `${base}.header`,
        message: `is not allowed: the template's header is ${format.toLowerCase()}, give headerMedia`,
      });
    if (!media)
      problems.push({
        path: `${base}.headerMedia`,
        message: `is required: the template's header is ${format.toLowerCase()}`,
      });
    else if (media.type !== format.toLowerCase())
      problems.push({
        path: `${base}.headerMedia.type`,
        message: `must be ${format.toLowerCase()}, the template's header format`,
      });
    return problems;
  }
  const problems: Problem[] = [];
  if (media)
    problems.push({
      path: `${base}.headerMedia`,
      message:
        format === null
          ? 'is not allowed: the template has no header'
          : `is not allowed: the template's header is ${format.toLowerCase()}`,
    });
  if (format === 'TEXT' || format === null || given?.header !== undefined)
    problems.push(
      ...valuesProblem(`${base}.header`, given?.header, format === 'TEXT' ? countOf(textOf(header)) : 0, 'header'),
    );
  return problems;
}

/** The problems of a template send against its definition (the provider's components); none when it fits. */
export function templateSendProblems(
  components: Component[],
  given: TemplateComponents | undefined,
  base = 'content.template.components',
): Problem[] {
  const problems = [
    ...headerProblems(base, given, componentOf(components, 'HEADER')),
    ...valuesProblem(`${base}.body`, given?.body, countOf(textOf(componentOf(components, 'BODY'))), 'body'),
    ...buttonProblems(`${base}.buttons`, given?.buttons, buttonsOf(components)),
  ];
  const carousel = componentOf(components, 'CAROUSEL');
  const cards = Array.isArray(carousel?.cards) ? (carousel.cards as { components?: Component[] }[]) : null;
  if (cards === null) {
    if (given?.cards !== undefined)
      problems.push({ path: `${base}.cards`, message: 'is not allowed: the template is not a carousel' });
    return problems;
  }
  const sent = given?.cards ?? [];
  if (sent.length !== cards.length) {
    problems.push({
      path: `${base}.cards`,
      message: `has ${plural(sent.length, 'card')}; the carousel has ${plural(cards.length, 'card')}`,
    });
    return problems;
  }
  cards.forEach((card, i) => {
    const parts = Array.isArray(card.components) ? card.components : [];
    const p = `${base}.cards.${i}`;
    problems.push(
      ...headerProblems(p, sent[i] as TemplateComponents, componentOf(parts, 'HEADER')),
      ...valuesProblem(`${p}.body`, sent[i]!.body, countOf(textOf(componentOf(parts, 'BODY'))), `card ${i} body`),
      ...buttonProblems(`${p}.buttons`, sent[i]!.buttons, buttonsOf(parts)),
    );
    if (sent[i]!.headerMedia.mediaId !== undefined)
      problems.push({ path: `${p}.headerMedia.mediaId`, message: 'is not allowed in a carousel card: give url' });
  });
  return problems;
}

/** A text with its variables filled in order of first appearance; a missing value stays `{{name}}`. */
export function fillText(text: string, values: string[]): string {
  const vars = variablesOf(text);
  const ordered = vars.every((v) => /^\d+$/.test(v)) ? [...vars].sort((a, b) => Number(a) - Number(b)) : vars;
  return text.replace(/\{\{([^{}]*)\}\}/g, (whole, name: string) => {
    const at = ordered.indexOf(name);
    return values[at] ?? whole;
  });
}

/** The filled template, part by part, as the recipient would read it (the portal's preview). */
export function filledTemplate(
  components: Component[],
  given: TemplateComponents | undefined,
): { header: string | null; body: string; footer: string | null; buttons: string[] } {
  const header = componentOf(components, 'HEADER');
  const format = header ? upper(header.format) || 'TEXT' : null;
  const footer = componentOf(components, 'FOOTER');
  return {
    header:
      format === null
        ? null
        : format === 'TEXT'
          ? fillText(textOf(header), given?.header ?? [])
          : `[${format.toLowerCase()}]`,
    body: fillText(textOf(componentOf(components, 'BODY')), given?.body ?? []),
    footer: footer && textOf(footer) !== '' ? textOf(footer) : null,
    buttons: buttonsOf(components).map((b) => (typeof b.text === 'string' ? b.text : upper(b.type).toLowerCase())),
  };
}

/**
 * The problems of a template send against the account's catalog: none when the catalog cannot be
 * read (no management credential, provider trouble: the provider checks the send itself then).
 */
export async function templateCatalogProblems(
  catalog: { definition: TemplateCatalog['definition'] },
  customerId: string,
  accountId: string,
  template: { name: string; language: string },
  variants: TemplateVariant[],
): Promise<Problem[]> {
  const read = await catalog.definition(customerId, accountId, template.name, template.language);
  if (read === null) return [];
  if ('missing' in read)
    return [
      {
        path: 'content.template.name',
        message: `names no template of this account's catalog in language ${template.language}`,
      },
    ];
  const components = Array.isArray(read.found.components) ? (read.found.components as Component[]) : [];
  return variants.flatMap((v) => templateSendProblems(components, v.components, v.path));
}
