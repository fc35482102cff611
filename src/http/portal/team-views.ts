// The Team page's markup: the customer's users with what an owner or administrator can do to each (role, disable,
// enable, a new invitation link), the invitation form, and a new link shown once.
import {
  assignableRoles,
  mayManageRole,
  PORTAL_ROLES,
  ROLE_LABELS,
  ROLE_SUMMARIES,
  roleName,
} from '../../portal/roles.js';
import type { TeamMember } from '../../portal/team-service.js';
import { when } from './format.js';
import { type Html, html, type Part } from './html.js';
import { copyButton, csrfField, notice, page, type PageContext } from './layout.js';
import { dataTable } from './tables.js';

/** What a shown-once invitation carries (stashed as JSON, never in the URL). */
export type ShownInvitation = { email: string; invitationUrl: string; expiresAt: string };

const STATUS_WORDS: Record<TeamMember['status'], string> = {
  active: 'Active',
  invited: 'Invited (no password yet)',
  disabled: 'Disabled',
};

export function shownInvitation(inv: ShownInvitation): Html {
  return notice(
    html`<p>
        <strong>The invitation link for ${inv.email}.</strong> It is shown once here: copy it now and send it to them.
        It works once, until ${when(inv.expiresAt)} UTC.
      </p>
      <p><code id="shown-link" class="secret">${inv.invitationUrl}</code> ${copyButton('shown-link')}</p>`,
  );
}

function roleForm(ctx: PageContext, m: TeamMember): Html {
  return html`<form method="post" action="/portal/team/${m.id}/role" class="inline">
    ${csrfField(ctx.session)}
    <label for="role-${m.id}">Role of ${m.email}</label>
    <select id="role-${m.id}" name="role">
      ${assignableRoles(ctx.session.role).map(
        (r) => html`<option value="${r}" ${r === m.role ? html`selected` : ''}>${ROLE_LABELS[r]}</option>`,
      )}
    </select>
    <button type="submit">Change role</button>
  </form>`;
}

function memberActions(ctx: PageContext, m: TeamMember): Part {
  if (m.id === ctx.session.userId) return html`<span class="muted">This is you.</span>`;
  if (!mayManageRole(ctx.session.role, m.role)) return html`<span class="muted">Only an owner manages an owner.</span>`;
  const button = (action: string, label: string) =>
    html`<form method="post" action="/portal/team/${m.id}/${action}" class="inline">
      ${csrfField(ctx.session)}<button type="submit">${label}</button>
    </form>`;
  return html`${roleForm(ctx, m)}
  ${m.status === 'disabled' ? button('enable', 'Enable') : html`<a href="/portal/team/${m.id}/disable">Disable…</a>`}
  ${m.status === 'invited' ? button('invitation', 'New invitation link') : ''}`;
}

function inviteForm(ctx: PageContext): Html {
  return html`<section aria-labelledby="invite">
    <h2 id="invite">Invite a user</h2>
    <p>They get a link that sets their password: by email when the service sends mail, otherwise shown once, here.</p>
    <form method="post" action="/portal/team" class="stack">
      ${csrfField(ctx.session)}
      <label for="invite-email">Email</label>
      <input id="invite-email" name="email" type="email" maxlength="320" required />
      <label for="invite-role">Role</label>
      <select id="invite-role" name="role">
        ${assignableRoles(ctx.session.role)
          .reverse()
          .map((r) => html`<option value="${r}">${ROLE_LABELS[r]}</option>`)}
      </select>
      <button type="submit">Invite</button>
    </form>
  </section>`;
}

/** What each role may do, in a line each (the full table: docs/portal.md). */
function roleLegend(): Html {
  return html`<section aria-labelledby="roles-h">
    <h2 id="roles-h">Roles</h2>
    <dl>
      ${PORTAL_ROLES.map(
        (r) =>
          html`<dt>${ROLE_LABELS[r]}</dt>
            <dd>${ROLE_SUMMARIES[r]}</dd>`,
      )}
    </dl>
  </section>`;
}

export function teamPage(ctx: PageContext, members: TeamMember[], top: Part): Html {
  return page(
    ctx,
    'Team',
    html`${top}
      <div id="team">
        ${dataTable(
          'The users of your account',
          ['Email', 'Role', 'Status', 'Last login (UTC)', 'Actions'],
          members.map(
            (m) =>
              html`<tr data-email="${m.email}">
                <td>${m.email}</td>
                <td>${roleName(m.role)}</td>
                <td>${STATUS_WORDS[m.status]}</td>
                <td>${m.lastLoginAt ? when(m.lastLoginAt) : 'Never'}</td>
                <td>${memberActions(ctx, m)}</td>
              </tr>`,
          ),
        )}
      </div>
      ${inviteForm(ctx)} ${roleLegend()}`,
  );
}
