// The compose form's check before anything is sent: the broadcast request the form describes
// (name, account, schedule, content, and each row's own template values), every row checked by
// POST /messages/broadcast's own schema and rules, and the form that sends to the good rows.
import crypto from 'node:crypto';

import {
  broadcastProblems,
  BroadcastRequestSchema,
  MAX_BROADCAST_RECIPIENTS,
} from '../../broadcasts/broadcast-request.js';
import { PROVIDER_TEXT_MAX } from '../../messages/content-kinds.js';
import { MAX_SEND_AT_LEAD_SECONDS, MIN_SEND_AT_LEAD_SECONDS } from '../../messages/schedule.js';
import type { Plan } from '../../plans/plans.js';
import type { RecipientRow } from '../../portal/recipients-csv.js';
import { AppError, errors, type Problem } from '../../shared/errors.js';
import { toProblems, validatorCompiler } from '../validation.js';
import {
  bodyField,
  type Catalog,
  headerField,
  type PickableTemplate,
  pickedTemplate,
  sendAtLimitDays,
} from './broadcast-compose.js';
import { str } from './deps.js';
import { number, parseWhen, when } from './format.js';
import { html } from './html.js';
import { csrfField, errorBox, type PageContext } from './layout.js';

const validate = validatorCompiler({
  schema: BroadcastRequestSchema,
  httpPart: 'body',
  method: 'POST',
  url: '',
}) as unknown as ((data: unknown) => boolean) & { errors?: never[] | null };

/** The API's problems for a request: schema first, then the cross-field rules. */
export function problemsOf(req: unknown, allowPrivateUrls: boolean): Problem[] {
  const ok = validate(req);
  return [...(ok ? [] : toProblems(validate.errors ?? [])), ...broadcastProblems(req, { allowPrivateUrls })];
}

/** The portal's refusal of a send time outside its one bound, in words, or null. */
export function sendAtFormProblem(plan: Plan, sendAt: string | undefined, now = new Date()): Problem | null {
  if (sendAt === undefined) return null;
  const at = new Date(sendAt).getTime();
  const days = sendAtLimitDays(plan);
  // The API counts the expiry from its own clock a moment later: a minute's margin keeps the two in step.
  const latest = new Date(now.getTime() + days * 86400_000 - 60_000);
  if (at >= now.getTime() + MIN_SEND_AT_LEAD_SECONDS * 1000 && at <= latest.getTime()) return null;
  const why =
    days * 86400 < MAX_SEND_AT_LEAD_SECONDS ? ` (a broadcast's messages expire ${days} days after it is sent)` : '';
  return {
    path: 'sendAt',
    message: `must be from 1 minute to ${days} days ahead: between now and ${when(latest.toISOString())} (UTC)${why}`,
  };
}

/** The compose form's labels for the API's paths. */
export const BROADCAST_LABELS: Record<string, string> = {
  name: 'Name',
  sendAt: 'Send at',
  chatAccountId: 'Account',
  content: 'Content',
  'content.text': 'Text',
  'content.template.name': 'Template name',
  'content.template.language': 'Template language',
  'content.template.components.body': 'Template values',
  'content.template.components.header': 'Template header values',
  recipients: 'Recipients',
};

/** The words a row's problem is shown in: the column the customer wrote, not the API's path (recipients.10.phoneE164). */
function rowProblem(field: string, message: string, rows: RecipientRow[]): string {
  // Another row named by the API's path (recipients.3.phoneE164) is named by its line.
  const other = /recipients\.(\d+)/.exec(message);
  const line = other ? rows[Number(other[1])]?.line : undefined;
  if (line !== undefined && field === 'phoneE164' && message.startsWith('duplicates'))
    return `The phone number is already on line ${line}: each number is sent one message.`;
  if (line !== undefined && field === 'externalId')
    return `The reference (second column) is already on line ${line}: each row needs its own.`;
  if (line !== undefined) message = message.replace(/recipients\.\d+(\.[A-Za-z0-9.]+)?/g, `line ${line}`);
  if (field === 'phoneE164')
    return /pattern|format/.test(message)
      ? 'The phone number is not in international form (such as +14155550101).'
      : `The phone number ${message}.`;
  if (field === 'externalId') return `The reference (second column) ${message}.`;
  if (field.startsWith('components')) return `A template value of this row ${message}.`;
  if (field === '') return `This row ${message}.`;
  return `${field.replace(/([a-z])([A-Z])/g, '$1 $2').replaceAll('.', ' ')} ${message}.`;
}

type Recipient = { phoneE164: string; externalId?: string; components?: { body: string[]; header?: string[] } };

/**
 * A picked template's content: the fields' values shared by every row when all are filled; when
 * some are empty, each row's own values (the columns after its reference) fill them in order.
 */
function templateContent(t: PickableTemplate, body: unknown, rows: RecipientRow[]) {
  const fields = t.bodyVariables.map((_v, i) => str(body, bodyField(i)).trim());
  const header = t.headerVariables.map((_v, i) => str(body, headerField(i)).trim());
  const empty = fields.flatMap((v, i) => (v === '' ? [i] : []));
  const headerPart = header.length > 0 ? { header } : {};
  const content = {
    type: 'template',
    template: {
      name: t.name,
      language: t.language,
      ...(empty.length === 0 && fields.length + header.length > 0
        ? { components: { ...(fields.length > 0 ? { body: fields } : {}), ...headerPart } }
        : {}),
    },
  };
  const missing = new Map<number, string>();
  const own = rows.map((r, i): Recipient['components'] => {
    if (empty.length === 0) return undefined;
    const values = r.values ?? [];
    if (values.length < empty.length)
      missing.set(
        i,
        `The row has no value for ${empty
          .slice(values.length)
          .map((k) => `{{${t.bodyVariables[k]}}}`)
          .join(', ')} (the columns after the reference, in order).`,
      );
    const filled = fields.map((v, k) => (v !== '' ? v : (values[empty.indexOf(k)] ?? '')));
    return { body: filled, ...headerPart };
  });
  return { content, own, missing };
}

/** Content typed in (text, or a template by name with one value per line). */
function typedContent(body: unknown) {
  if (str(body, 'contentType') !== 'template') return { type: 'text', text: str(body, 'text') };
  const values = str(body, 'templateBody')
    .split('\n')
    .map((v) => v.trim())
    .filter((v) => v !== '');
  return {
    type: 'template',
    template: {
      name: str(body, 'templateName'),
      language: str(body, 'templateLanguage'),
      ...(values.length > 0 ? { components: { body: values } } : {}),
    },
  };
}

/** The request the form describes (without recipients' problems), and the rows' own problems found on the way. */
export function requestOf(plan: Plan, body: Record<string, unknown>, catalog: Catalog, rows: RecipientRow[]) {
  const picked = str(body, 'contentType') === 'template' ? pickedTemplate(catalog, body) : undefined;
  const t = picked ? templateContent(picked, body, rows) : null;
  const general: Problem[] = [];
  let sendAt: string | undefined;
  try {
    sendAt = parseWhen(str(body, 'sendAt'), 'sendAt')?.toISOString();
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    general.push({ path: 'sendAt', message: 'must be a date and time, such as 2026-12-01T09:00 (UTC)' });
  }
  // Checked here, at "Check recipients", with the same bound the label and the send use.
  const late = sendAtFormProblem(plan, sendAt);
  if (late) general.push(late);
  // A text the provider would refuse after the broadcast was accepted (the API takes up to 10,000).
  const length = [...str(body, 'text')].length;
  if (!picked && str(body, 'contentType') !== 'template' && length > PROVIDER_TEXT_MAX)
    general.push({
      path: 'content.text',
      message: `is ${number(length)} characters long; the provider delivers at most ${number(PROVIDER_TEXT_MAX)} in one message`,
    });
  const name = str(body, 'name').trim();
  const recipients: Recipient[] = rows.map((r, i) => ({
    phoneE164: r.phoneE164,
    ...(r.externalId ? { externalId: r.externalId } : {}),
    ...(t?.own[i] ? { components: t.own[i] } : {}),
  }));
  const req = {
    externalId: `portal-${crypto.randomUUID()}`,
    ...(name ? { name } : {}),
    chatAccountId: picked?.accountId ?? str(body, 'chatAccountId'),
    content: t?.content ?? typedContent(body),
    recipients,
    ...(sendAt ? { sendAt } : {}),
  };
  return { req, general, missing: t?.missing ?? new Map<number, string>() };
}

export type RowCheck = ReturnType<typeof checkRows>;

/** The preview's check: each row with the API's rules; a row with a problem is left out of the send. */
export function checkRows(
  plan: Plan,
  allowPrivateUrls: boolean,
  body: Record<string, unknown>,
  catalog: Catalog,
  rows: RecipientRow[],
) {
  const { req, general, missing } = requestOf(plan, body, catalog, rows);
  const rowProblems = new Map<number, string[]>();
  const add = (i: number, p: string) => rowProblems.set(i, [...(rowProblems.get(i) ?? []), p]);
  for (const [i, p] of missing) add(i, p);
  for (const p of problemsOf(req, allowPrivateUrls)) {
    const m = /^recipients\.(\d+)(?:\.(.*))?$/.exec(p.path);
    if (m) {
      if (!missing.has(Number(m[1]))) add(Number(m[1]), rowProblem(m[2] ?? '', p.message, rows));
    } else general.push(p);
  }
  rows.forEach((_r, i) => {
    if (i >= MAX_BROADCAST_RECIPIENTS)
      add(i, `over the limit of ${number(MAX_BROADCAST_RECIPIENTS)} recipients per broadcast`);
  });
  const good = req.recipients.filter((_r, i) => !rowProblems.has(i));
  return { rows, req, rowProblems, general, good };
}

/** At most this many left-out rows are listed (a page of 25,000 rows helps no one); the count says how many there are. */
export const MAX_SHOWN_BAD_ROWS = 100;

/** What the check found, and the form that sends to the good rows (every field of the request, hidden). */
export function checkedView(session: PageContext['session'], c: RowCheck, remaining: number) {
  const { rows, req, rowProblems, general, good } = c;
  return html`${general.length > 0 ? errorBox(errors.validation(general), BROADCAST_LABELS) : ''}
    <section aria-labelledby="check-h">
      <h2 id="check-h" tabindex="-1" data-focus-after-swap>Recipients checked</h2>
      <p>
        ${rows.length} row(s): <strong>${good.length} will be sent</strong>, ${rowProblems.size} left out. This
        broadcast would use ${good.length} of your remaining ${number(remaining)} messages this month.
      </p>
      ${
        rowProblems.size > 0
          ? html`<table>
              <caption>
                Rows left
                out${
                  rowProblems.size > MAX_SHOWN_BAD_ROWS
                    ? html`: the first ${number(MAX_SHOWN_BAD_ROWS)} of ${number(rowProblems.size)}`
                    : ''
                }
              </caption>
              <thead>
                <tr>
                  <th scope="col">Line</th>
                  <th scope="col">Phone</th>
                  <th scope="col">Problem</th>
                </tr>
              </thead>
              <tbody>
                ${[...rowProblems.entries()].slice(0, MAX_SHOWN_BAD_ROWS).map(
                  ([i, ps]) =>
                    html`<tr class="bad-row">
                      <td>${rows[i]!.line}</td>
                      <td>${rows[i]!.raw}</td>
                      <td>${ps.join('; ')}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
          : ''
      }
      ${
        good.length > 0 && general.length === 0
          ? html`<form method="post" action="/portal/broadcasts" class="stack">
              ${csrfField(session)}
              <input type="hidden" name="request" value="${JSON.stringify({ ...req, recipients: good })}" />
              <button type="submit">Send to ${good.length} recipient(s)</button>
            </form>`
          : ''
      }
    </section>`;
}
