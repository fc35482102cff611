// Chat accounts in GET /chat-accounts' shape: status (with the reason when not CONNECTED),
// capabilities (with the plan that would enable a disabled one), send policy, callback URL.
import type { FastifyInstance } from 'fastify';

import type { AccountRecord } from '../../accounts/account-record.js';
import { type PublicAccount, toPublicAccount } from '../../accounts/account-view.js';
import { type Plan, PLAN_LIMITS } from '../../plans/plans.js';
import type { PortalDeps } from './deps.js';
import { tenantOf } from './deps.js';
import { plansWith, when } from './format.js';
import { html } from './html.js';
import { copyButton, page } from './layout.js';
import { sendPage } from './reply.js';

export function registerAccountRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/accounts', async (request, reply) => {
    const { tenant, ctx } = await tenantOf(deps, request);
    const limits = await deps.messagingLimits.of(tenant.accounts);
    const accounts = tenant.accounts.map((a) => ({
      record: a,
      view: toPublicAccount(a, tenant.plan, deps.publicBaseUrl, limits.get(a.id)),
    }));
    return sendPage(
      reply,
      page(
        ctx,
        'Chat accounts',
        html`${accounts.length === 0 ? html`<p>No chat account is linked yet. Your operator links them.</p>` : ''}
        ${accounts.map(({ record, view }, i) => accountCard(record, view, tenant.plan, i))}`,
      ),
    );
  });
}

/** The business portfolio's messaging limit and its use (decision 0044), for OFFICIAL accounts. */
function messagingLimitFields(a: PublicAccount) {
  const l = a.messagingLimit;
  if (!l) return '';
  return html`<dt>Messaging limit (business portfolio, last ${l.windowHours} h)</dt>
    <dd>
      ${l.used} of ${l.limit ?? 'unlimited'} unique recipients started${l.tier ? html` (<code>${l.tier}</code>)` : ''}
    </dd>`;
}

/** One account's card: its fields and its capabilities. */
function accountCard(record: AccountRecord, a: PublicAccount, plan: Plan, i: number) {
  const caps = Object.entries(a.capabilities) as [string, { supported: boolean; enabled: boolean }][];
  return html`<section class="card" aria-labelledby="acc-${i}">
    <h2 id="acc-${i}">${a.displayName} <span class="muted">${a.phoneNumber}</span></h2>
    <dl class="fields">
      <dt>id (chatAccountId)</dt>
      <dd><code>${a.id}</code></dd>
      <dt>Type</dt>
      <dd>${a.type} (channel <code>${a.channel}</code>)</dd>
      <dt>Status</dt>
      <dd>
        <span class="status acc-${a.status}">${a.status}</span>
        ${a.status !== 'CONNECTED' ? html` — reason: <code>${a.lastErrorCode ?? 'not given'}</code>` : ''}
      </dd>
      <dt>Connected</dt>
      <dd>${when(a.connectedAt)}</dd>
      ${
        a.official
          ? html`<dt>Verified name</dt>
              <dd>${a.official.verifiedName ?? '—'} (${a.official.wabaVerification})</dd>`
          : ''
      }
      ${
        a.sendPolicy
          ? html`<dt>Send policy</dt>
              <dd>
                ${a.sendPolicy.mode}${
                  a.sendPolicy.testRecipientsCount !== null
                    ? html`, ${a.sendPolicy.testRecipientsCount} test recipient(s)`
                    : ''
                }
              </dd>`
          : ''
      }
      ${messagingLimitFields(a)}
      ${
        a.webhook
          ? html`<dt>Webhook callback URL (configure it at the provider)</dt>
              <dd><code id="cb-${i}">${a.webhook.callbackUrl}</code> ${copyButton(`cb-${i}`)}</dd>`
          : ''
      }
    </dl>
    <table>
      <caption>
        Capabilities
      </caption>
      <thead>
        <tr>
          <th scope="col">Capability</th>
          <th scope="col">Supported</th>
          <th scope="col">Enabled</th>
        </tr>
      </thead>
      <tbody>
        ${caps.map(
          ([name, c]) =>
            html`<tr>
              <th scope="row">${name}</th>
              <td>${c.supported ? 'yes' : 'no'}</td>
              <td>
                ${
                  c.enabled
                    ? 'yes'
                    : !c.supported
                      ? 'no (not for this account type)'
                      : !PLAN_LIMITS[plan].templates
                        ? html`no — enabled on the ${plansWith('templates')} plans`
                        : name === 'templateManagement' && !record.hasManagementToken
                          ? 'no — your operator must load a management credential'
                          : 'no'
                }
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}
