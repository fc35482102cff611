// The inbox page's views: the sender lookup form, the accounts' whitelist/blacklist forms and the
// forwarding rules with their form (inbox-routes.ts loads the data and handles the forms).
import type { Caller } from '../../auth/caller.js';
import type { Tenant } from '../../auth/directory.js';
import { MAX_MATCH_TEXT, MAX_PATTERN_LENGTH } from '../../inbound/forwarding-match.js';
import type { Sender } from '../../senders/sender-service.js';
import type { AppError } from '../../shared/errors.js';
import type { PortalDeps } from './deps.js';
import { str } from './deps.js';
import { type Html, html } from './html.js';
import { csrfField, type PageContext } from './layout.js';
import { at, fieldList } from './message-page.js';

export const CONDITIONS = ['contains', 'starts_with', 'regex'] as const;

/** What a rule form said, to show again beside its fields when it is refused. */
export type RuleForm = { body: unknown; err: AppError };

/** The message of a validation error for one field, if the error names it. */
export function fieldError(form: RuleForm | undefined, path: string): string | null {
  const details = form?.err.body().details;
  if (!Array.isArray(details)) return null;
  const d = (details as { path: string; message: string }[]).find((x) => x.path === path);
  return d ? d.message : null;
}

/** A filter form sent back with a problem: what was typed, and the problem beside its field. */
export type FilterDraft = {
  accountId: string;
  mode: string;
  numbers: string;
  problem: { field: 'mode' | 'numbers'; text: string };
};

/** "Has this number written to me?": the sender lookup form. */
export function senderLookup(accountOptions: Html[]) {
  return html`<section aria-labelledby="lookup-h">
    <h2 id="lookup-h">Has this number written to me?</h2>
    <form method="get" action="/portal/inbox/sender" class="filters">
      <div><label for="phone">Phone</label><input id="phone" name="phone" required /></div>
      <div>
        <label for="l-acc">Account</label>
        <select id="l-acc" name="chatAccountId">
          ${accountOptions}
        </select>
      </div>
      <button type="submit">Look up</button>
    </form>
  </section>`;
}

type Filters = Awaited<ReturnType<PortalDeps['settings']['getFilter']>>[];

/** Each account's whitelist/blacklist form; a `draft` sent back keeps what was typed and its problem. */
export function filterForms(
  ctx: PageContext,
  tenant: Caller['tenant'],
  filters: Filters,
  owner: boolean,
  draft: FilterDraft | null,
) {
  return html`<section aria-labelledby="filter-h">
    <h2 id="filter-h">Inbox whitelist / blacklist</h2>
    ${filters.map((f, i) => {
      const a = tenant.accounts[i]!;
      // A form sent back with a problem keeps what was typed, the problem beside its field.
      const d = draft?.accountId === a.id ? draft : null;
      const mode = d ? d.mode : f.mode;
      const fieldError = (field: 'mode' | 'numbers') =>
        d?.problem.field === field
          ? html`<p class="field-error" id="${field}-${i}-error" role="alert">${d.problem.text}</p>`
          : '';
      const invalid = (field: 'mode' | 'numbers') =>
        d?.problem.field === field ? html`aria-invalid="true" aria-describedby="${field}-${i}-error"` : '';
      return html`<form method="post" action="/portal/inbox/filters/${a.id}" class="stack">
        ${csrfField(ctx.session)}
        <h3>${a.displayName} (${a.phoneNumber})</h3>
        <label for="mode-${i}">Mode</label>
        <select id="mode-${i}" name="mode" ${owner ? '' : 'disabled'} ${invalid('mode')}>
          ${['off', 'whitelist', 'blacklist'].map((m) => html`<option value="${m}" ${mode === m ? 'selected' : ''}>${m}</option>`)}
        </select>
        ${fieldError('mode')}
        <label for="numbers-${i}">Numbers, one per line</label>
        <textarea id="numbers-${i}" name="numbers" rows="3" ${owner ? '' : 'readonly'} ${invalid('numbers')}>
${d ? d.numbers : f.numbers.join('\n')}</textarea>
        ${fieldError('numbers')} ${owner ? html`<button type="submit">Save filter</button>` : ''}
      </form>`;
    })}
  </section>`;
}

type Rules = Awaited<ReturnType<PortalDeps['settings']['listRules']>>;

/** The forwarding rules, and the form that creates one (with its live sample check for owners). */
export function rulesSection(ctx: PageContext, rules: Rules, owner: boolean, form: RuleForm | undefined) {
  const patternError = fieldError(form, 'condition.pattern');
  return html`<section aria-labelledby="rules-h">
    <h2 id="rules-h">Forwarding rules</h2>
    <ul>
      ${rules.map(
        (r) =>
          html`<li>
            <strong>${r.name || '(no name)'}</strong>: ${r.condition.type} <code>${r.condition.pattern}</code> →
            ${r.destination.url} ${r.isActive ? '' : '(inactive)'}
            ${owner ? html`<a href="/portal/inbox/rules/${r.id}/delete">Delete…</a>` : ''}
          </li>`,
      )}
    </ul>
    <form method="post" action="/portal/inbox/rules" class="stack" id="rule-form">
      ${csrfField(ctx.session)}
      <label for="r-name">Name</label><input id="r-name" name="name" maxlength="200" />
      <label for="r-type">Condition</label>
      <select id="r-type" name="conditionType">
        ${CONDITIONS.map((c) => html`<option value="${c}">${c}</option>`)}
      </select>
      <label for="r-pattern">Pattern</label
      ><input
        id="r-pattern"
        name="pattern"
        required
        maxlength="${MAX_PATTERN_LENGTH}"
        value="${form ? str(form.body, 'pattern') : ''}"
        ${patternError ? html`aria-invalid="true" aria-describedby="r-pattern-error"` : ''}
      />
      ${patternError ? html`<p id="r-pattern-error" class="field-error" role="alert">${patternError}</p>` : ''}
      <div>
        <input id="r-case" type="checkbox" name="caseSensitive" value="true" /><label for="r-case"
          >Case sensitive</label
        >
      </div>
      <label for="r-url">Destination URL (POSTed each matching message)</label
      ><input id="r-url" name="url" type="url" />
      ${
        owner
          ? html`<label for="r-sample">Sample text to check (its first ${MAX_MATCH_TEXT} characters)</label>
              <input
                id="r-sample"
                name="sample"
                maxlength="${MAX_MATCH_TEXT}"
                value="${form ? str(form.body, 'sample') : ''}"
                hx-post="/portal/inbox/rules/check"
                hx-trigger="input changed delay:300ms"
                hx-include="#rule-form"
                hx-target="#sample-result"
              />
              <div id="sample-result" aria-live="polite"></div>
              <button type="submit" formaction="/portal/inbox/rules/check">Check the sample</button>
              <button type="submit">Create rule</button>`
          : ''
      }
    </form>
  </section>`;
}

/** A sender (GET /inbound-senders/{phone}) in words: what each field means, times as times, no literal null. */
export function senderFields(s: Sender, tenant: Tenant): Html {
  const account = tenant.accounts.find((a) => a.id === s.chatAccountId);
  const never = html`<span class="muted">never</span>`;
  return fieldList([
    ['Number', s.phoneE164],
    ['Account', account ? `${account.displayName} (${account.phoneNumber})` : s.chatAccountId],
    ['Has written to this account', s.hasWritten ? 'yes' : 'no'],
    ['Messages received from it', String(s.inboundCount)],
    ['First message', s.firstInboundAt ? at(s.firstInboundAt) : never],
    ['Last message', s.lastInboundAt ? at(s.lastInboundAt) : never],
    [
      'Reply window (free text allowed)',
      s.replyWindowExpiresAt
        ? Date.parse(s.replyWindowExpiresAt) > Date.now()
          ? html`open until ${at(s.replyWindowExpiresAt)}`
          : html`closed since ${at(s.replyWindowExpiresAt)}: send an approved template`
        : 'closed: the number never wrote; send an approved template',
    ],
    [
      'Opted out (suppression list)',
      s.optedOut ? html`yes, since ${s.optedOutAt ? at(s.optedOutAt) : 'an unknown time'}` : 'no',
    ],
    ['Mode', s.sandbox ? 'sandbox (simulated)' : 'live'],
  ]);
}
