// Overview: plan, this month's usage against the quota (chart and reset date, from the service
// GET /usage uses: accepted per day of the daily rollup), messages by
// status over 14 days, webhook delivery health per endpoint, accounts and their status.
import type { FastifyInstance, FastifyRequest } from 'fastify';

import { PLAN_LIMITS } from '../../plans/plans.js';
import { MESSAGE_STATUSES } from '../../shared/vocab.js';
import type { Usage } from '../../usage/usage-service.js';
import { usageChart } from './charts.js';
import type { PortalDeps } from './deps.js';
import { tenantOf } from './deps.js';
import { number, planName, plansWith, when } from './format.js';
import { html } from './html.js';
import { page } from './layout.js';
import { sendPage } from './reply.js';

export function registerOverviewRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/', async (request, reply) => {
    const o = await loadOverview(deps, request);
    return sendPage(
      reply,
      page(
        o.ctx,
        'Overview',
        html`${planSection(o)} ${pricingSection(o.usage.pricing)} ${statusSection(o)} ${webhooksSection(o)}
        ${accountsSection(o)}`,
      ),
    );
  });
}

/** What the overview shows: the plan, this month's usage, status by day, webhook health. */
async function loadOverview(deps: PortalDeps, request: FastifyRequest) {
  const { tenant, caller, ctx } = await tenantOf(deps, request);
  const webhooks = deps.endpoints.allowed(caller);
  const [usage, byDay, endpoints, health] = await Promise.all([
    deps.usage.get(caller),
    deps.queries.statusByDay(tenant.customerId),
    webhooks ? deps.endpoints.list(caller) : Promise.resolve([]),
    webhooks ? deps.queries.webhookHealth(tenant.customerId) : Promise.resolve(new Map()),
  ]);
  return { tenant, ctx, webhooks, usage, byDay, endpoints, health };
}

type Overview = Awaited<ReturnType<typeof loadOverview>>;

function planSection({ tenant, usage }: Overview) {
  const limits = PLAN_LIMITS[tenant.plan];
  return html`<section aria-labelledby="plan-h">
    <h2 id="plan-h">Plan and usage</h2>
    <p>
      Plan <strong>${planName(tenant.plan)}</strong>: ${number(limits.messagesPerMonth)} messages a month,
      ${limits.accounts} account(s), ${limits.retentionDays} days of history.
    </p>
    <p>
      <strong>${number(usage.used)}</strong> of ${number(usage.limit)} messages used this month
      (${Math.round((usage.used / usage.limit) * 100)}%). The quota resets on
      <time datetime="${usage.resetsAt}">${usage.resetsAt.slice(0, 10)}</time> (UTC). Sandbox messages do not count.
    </p>
    ${usageChart({
      month: usage.month,
      days: usage.byDay.map((d) => ({ day: d.date, n: d.accepted })),
      used: usage.used,
      limit: usage.limit,
    })}
  </section>`;
}

/** What the provider's receipts said the month's messages cost: billable or free, by category. */
function pricingSection(pricing: Usage['pricing']) {
  return html`<section aria-labelledby="pricing-h">
    <h2 id="pricing-h">What messages cost this month</h2>
    ${
      pricing.byCategory.length === 0
        ? html`<p>No message priced by the provider yet this month.</p>`
        : html`<table>
            <caption>
              Messages the provider priced, by category, as its receipts said (billable, free, not said)
            </caption>
            <thead>
              <tr>
                <th scope="col">Category</th>
                <th scope="col">Billable</th>
                <th scope="col">Free</th>
                <th scope="col">Not said</th>
              </tr>
            </thead>
            <tbody>
              ${pricing.byCategory.map(
                (c) =>
                  html`<tr>
                    <th scope="row">${c.category}</th>
                    <td>${number(c.billable)}</td>
                    <td>${number(c.free)}</td>
                    <td>${number(c.unknown)}</td>
                  </tr>`,
              )}
              <tr>
                <th scope="row">All</th>
                <td>${number(pricing.billable)}</td>
                <td>${number(pricing.free)}</td>
                <td>${number(pricing.unknown)}</td>
              </tr>
            </tbody>
          </table>`
    }
  </section>`;
}

function statusSection({ byDay }: Overview) {
  return html`<section aria-labelledby="status-h">
    <h2 id="status-h">Messages by status, last 14 days</h2>
    <table>
      <caption>
        Messages created per day (UTC) and their status now
      </caption>
      <thead>
        <tr>
          <th scope="col">Day</th>
          ${MESSAGE_STATUSES.map((s) => html`<th scope="col">${s}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${byDay.map(
          (d) =>
            html`<tr>
              <th scope="row">${d.day}</th>
              ${MESSAGE_STATUSES.map((s) => html`<td>${d.counts[s]}</td>`)}
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

function webhooksSection({ webhooks, endpoints, health }: Overview) {
  return html`<section aria-labelledby="wh-h">
    <h2 id="wh-h">Webhook delivery health</h2>
    ${
      !webhooks
        ? html`<p>Webhooks are available on the ${plansWith('webhooks')} plans.</p>`
        : endpoints.length === 0
          ? html`<p>No endpoint yet. <a href="/portal/webhooks">Add one</a>.</p>`
          : html`<ul>
              ${endpoints.map((e) => {
                const h = health.get(e.id);
                return html`<li>
                  <a href="/portal/webhooks/${e.id}">${e.url}</a>:
                  ${h && h.total > 0 ? `${Math.round((h.ok / h.total) * 100)}% of ${h.total} deliveries succeeded (7 days)` : 'no deliveries in 7 days'}.
                  Last failure:
                  ${e.lastFailureAt ? html`${when(e.lastFailureAt)} — ${e.lastFailureReason ?? ''}` : 'none'}
                </li>`;
              })}
            </ul>`
    }
  </section>`;
}

function accountsSection({ tenant }: Overview) {
  return html`<section aria-labelledby="acc-h">
    <h2 id="acc-h">Accounts</h2>
    <ul>
      ${tenant.accounts.map(
        (a) =>
          html`<li>
            ${a.displayName} (${a.phoneNumber}): <strong>${a.status}</strong>
            ${a.status !== 'CONNECTED' ? html` — reason: <code>${a.lastErrorCode ?? 'not given'}</code>` : ''}
          </li>`,
      )}
    </ul>
  </section>`;
}
