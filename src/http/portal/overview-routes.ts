// Overview: plan, this month's usage (chart scaled to the data with the quota as a marker, and
// its numbers by day, from the service GET /usage uses: accepted per day of the daily rollup),
// messages by status over 14 days (bars, totals and a table by day, cancelled apart from failed,
// every number a link to the messages list it counts), webhook delivery health per endpoint,
// accounts with their status and their figures over the same 14 days (decision 0049).
import type { FastifyInstance, FastifyRequest } from 'fastify';

import { PLAN_LIMITS } from '../../plans/plans.js';
import type { Usage } from '../../usage/usage-service.js';
import { cumulative, usageChart } from './charts.js';
import type { PortalDeps } from './deps.js';
import { tenantOf } from './deps.js';
import { defaultKeptDays, number, planName, plansWith, when } from './format.js';
import { html } from './html.js';
import { canRead, page } from './layout.js';
import { accountsSection, statusSection } from './overview-views.js';
import { sendPage } from './reply.js';

export function registerOverviewRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/', async (request, reply) => {
    const o = await loadOverview(deps, request);
    return sendPage(
      reply,
      page(
        o.ctx,
        'Overview',
        html`${planSection(o)} ${pricingSection(o.usage.pricing)} ${statusSection(o.status)}
        ${canRead(o.ctx, 'webhooks') ? webhooksSection(o) : ''} ${accountsSection(o.tenant, o.figures, o.status.since)}`,
      ),
    );
  });
}

/** What the overview shows: the plan, this month's usage, status by day, webhook health. */
async function loadOverview(deps: PortalDeps, request: FastifyRequest) {
  const { tenant, caller, ctx } = await tenantOf(deps, request);
  // A role that may not see webhooks (a support agent) reads nothing of them here either.
  const webhooks = deps.endpoints.allowed(caller) && canRead(ctx, 'webhooks');
  const [usage, status, endpoints, health] = await Promise.all([
    deps.usage.get(caller),
    deps.queries.shownStatusByDay(tenant.customerId),
    webhooks ? deps.endpoints.list(caller) : Promise.resolve([]),
    webhooks ? deps.queries.webhookHealth(tenant.customerId) : Promise.resolve(new Map()),
  ]);
  const figures = await deps.queries.accountFigures(tenant.customerId, status.since);
  return { tenant, ctx, webhooks, usage, status, figures, endpoints, health };
}

type Overview = Awaited<ReturnType<typeof loadOverview>>;

function planSection({ tenant, usage }: Overview) {
  const limits = PLAN_LIMITS[tenant.plan];
  return html`<section aria-labelledby="plan-h">
    <h2 id="plan-h">Plan and usage</h2>
    <p>
      Plan <strong>${planName(tenant.plan)}</strong>: ${number(limits.messagesPerMonth)} messages a month,
      ${limits.accounts} account(s), messages kept up to ${limits.retentionDays} days: each message for its lifetime,
      ${defaultKeptDays(tenant.plan)} days unless its send asks for longer (<code>ttlSeconds</code>), never beyond
      ${limits.retentionDays}.
    </p>
    <p>
      <strong>${number(usage.used)}</strong> of ${number(usage.limit)} messages used this month
      (${Math.round((usage.used / usage.limit) * 100)}%). The quota resets on
      <time datetime="${usage.resetsAt}">${usage.resetsAt.slice(0, 10)}</time> (UTC). Sandbox messages do not count.
    </p>
    ${usageChart({ month: usage.month, days: usageDays(usage), used: usage.used, limit: usage.limit })}
    ${usageTable(usage)}
  </section>`;
}

const usageDays = (usage: Usage) => usage.byDay.map((d) => ({ day: d.date, n: d.accepted }));

/** The chart's numbers: messages counted per day and the running total, days with messages only. */
function usageTable(usage: Usage) {
  const perDay = new Map(usageDays(usage).map((d) => [Number(d.day.slice(8, 10)), d.n]));
  const rows = cumulative(usage.month, usageDays(usage)).points.filter((p) => (perDay.get(p.day) ?? 0) > 0);
  return html`<details class="chart-data">
    <summary>The usage chart's numbers</summary>
    ${
      rows.length === 0
        ? html`<p>No message counted this month yet.</p>`
        : html`<table>
            <caption>
              Messages counted against the quota per day (UTC) this month
            </caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">Messages</th>
                <th scope="col">Month so far</th>
              </tr>
            </thead>
            <tbody>
              ${rows.map(
                (p) =>
                  html`<tr>
                    <th scope="row">${usage.month}-${String(p.day).padStart(2, '0')}</th>
                    <td>${number(perDay.get(p.day) ?? 0)}</td>
                    <td>${number(p.total)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  </details>`;
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
