// Server-drawn SVG charts (no script, no style attribute: the CSP allows neither inline): the
// month's cumulative usage scaled to the data with the quota as a marker, and bars of messages by
// status. Each chart has a title and a description, and the page shows its numbers in a table.
import { number } from './format.js';
import { type Html, html } from './html.js';

/** A round upper bound for an axis at or above `v`: 1, 2 or 5 times a power of ten. */
export function niceCeil(v: number): number {
  if (v <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return ([1, 2, 5, 10].map((m) => m * p).find((n) => n >= v) ?? 10 * p) as number;
}

/** The cumulative count at the end of each day of the month so far (days are YYYY-MM-DD counts). */
export function cumulative(month: string, days: { day: string; n: number }[], now = new Date()) {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const daysInMonth = new Date(Date.UTC(y, m, 0)).getUTCDate();
  const current = now.getUTCFullYear() === y && now.getUTCMonth() + 1 === m;
  const last = current ? Math.min(now.getUTCDate(), daysInMonth) : daysInMonth;
  const byDay = new Map(days.map((d) => [Number(d.day.slice(8, 10)), d.n]));
  let sum = 0;
  const points: { day: number; total: number }[] = [];
  for (let d = 1; d <= last; d++) {
    sum += byDay.get(d) ?? 0;
    points.push({ day: d, total: sum });
  }
  return { daysInMonth, points };
}

/**
 * Cumulative messages per day of the month. The y axis is scaled to the data (the larger of the
 * count and the quota only when the quota is within twice the data's scale): a month far below its
 * quota still shows its shape; the quota is then a marker at the top edge, with its number.
 */
export function usageChart(opts: { month: string; days: { day: string; n: number }[]; used: number; limit: number }) {
  const W = 600;
  const H = 220;
  const pad = { l: 56, r: 12, t: 28, b: 30 };
  const { daysInMonth, points } = cumulative(opts.month, opts.days);
  const dataTop = niceCeil(Math.max(opts.used, points.at(-1)?.total ?? 0, 1) * 1.1);
  const quotaOnScale = opts.limit <= dataTop * 2;
  const top = quotaOnScale ? niceCeil(Math.max(dataTop, opts.limit)) : dataTop;
  const x = (d: number) => pad.l + ((d - 1) / Math.max(1, daysInMonth - 1)) * (W - pad.l - pad.r);
  const yv = (v: number) => H - pad.b - (Math.min(v, top) / top) * (H - pad.t - pad.b);
  const line = points.map((p) => `${x(p.day).toFixed(1)},${yv(p.total).toFixed(1)}`).join(' ');
  const quotaY = quotaOnScale ? yv(opts.limit) : pad.t - 4;
  const share = opts.limit > 0 ? Math.round((opts.used / opts.limit) * 100) : 0;
  return html`<svg
    class="chart usage-chart"
    viewBox="0 0 ${W} ${H}"
    width="${W}"
    height="${H}"
    role="img"
    aria-labelledby="usage-title usage-desc"
    data-top="${top}"
    data-quota-on-scale="${String(quotaOnScale)}"
  >
    <title id="usage-title">Usage this month</title>
    <desc id="usage-desc">
      ${number(opts.used)} of ${number(opts.limit)} messages used this month (${share}%); the line is the day-by-day
      cumulative count on a scale up to ${number(top)};
      ${quotaOnScale ? 'the dashed line is the quota' : 'the quota is above the scale, marked at the top edge'}.
    </desc>
    <g class="axis" stroke="currentColor" stroke-opacity="0.6">
      <line x1="${pad.l}" y1="${H - pad.b}" x2="${W - pad.r}" y2="${H - pad.b}" />
      <line x1="${pad.l}" y1="${pad.t}" x2="${pad.l}" y2="${H - pad.b}" />
    </g>
    <g class="ticks" font-size="12" fill="currentColor" text-anchor="end">
      ${[0, top / 2, top].filter(Number.isInteger).map((v) => html`<text x="${pad.l - 6}" y="${yv(v) + 4}">${number(v)}</text>`)}
    </g>
    <g font-size="12" fill="currentColor">
      <text x="${pad.l}" y="${H - 8}">day 1</text>
      <text x="${W - pad.r}" y="${H - 8}" text-anchor="end">day ${daysInMonth}</text>
    </g>
    <g class="quota-marker" stroke="#b00020" fill="#b00020">
      ${
        quotaOnScale
          ? html`<line x1="${pad.l}" y1="${quotaY}" x2="${W - pad.r}" y2="${quotaY}" stroke-dasharray="6 4" />`
          : html`<path d="M ${W - pad.r - 10} ${quotaY} l 5 -8 l 5 8 z" />`
      }
      <text
        x="${W - pad.r - (quotaOnScale ? 0 : 16)}"
        y="${quotaOnScale ? quotaY - 4 : quotaY}"
        font-size="12"
        stroke="none"
        text-anchor="end"
      >
        quota ${number(opts.limit)}${quotaOnScale ? '' : ' (above the scale)'}
      </text>
    </g>
    <polyline class="usage-line" points="${line}" fill="none" stroke="#0b5fff" stroke-width="2" />
  </svg>`;
}

/** One bar per status, its length the share of the largest (the table beside it links each number to its list). */
export function statusBars(rows: { status: string; n: number }[]): Html {
  const W = 600;
  const rowH = 26;
  const labelW = 90;
  const numberW = 70;
  const H = rows.length * rowH + 8;
  const max = Math.max(1, ...rows.map((r) => r.n));
  const total = rows.reduce((s, r) => s + r.n, 0);
  return html`<svg
    class="chart status-chart"
    viewBox="0 0 ${W} ${H}"
    width="${W}"
    height="${H}"
    role="img"
    aria-labelledby="status-chart-title status-chart-desc"
  >
    <title id="status-chart-title">Messages by status, last 14 days</title>
    <desc id="status-chart-desc">
      ${number(total)} messages: ${rows.map((r) => `${r.status} ${number(r.n)}`).join(', ')}.
    </desc>
    ${rows.map((r, i) => {
      const y = 4 + i * rowH;
      const w = r.n === 0 ? 0 : Math.max(2, ((W - labelW - numberW) * r.n) / max);
      return html`<g>
        <text x="${labelW - 8}" y="${y + 17}" font-size="13" fill="currentColor" text-anchor="end">${r.status}</text>
        <rect
          class="bar bar-${r.status}"
          x="${labelW}"
          y="${y + 3}"
          width="${w.toFixed(1)}"
          height="${rowH - 8}"
          fill="#0b5fff"
        />
        <text x="${labelW + w + 6}" y="${y + 17}" font-size="13" fill="currentColor">${number(r.n)}</text>
      </g>`;
    })}
  </svg>`;
}
