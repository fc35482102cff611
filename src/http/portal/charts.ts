// Server-drawn SVG charts (no script): the month's cumulative usage against the quota.
import { type Html, html } from './html.js';

/** Cumulative messages per day of the month, with the quota as a line; `days` are YYYY-MM-DD counts. */
export function usageChart(opts: {
  month: string;
  days: { day: string; n: number }[];
  used: number;
  limit: number;
}): Html {
  const W = 600;
  const H = 220;
  const pad = { l: 50, r: 10, t: 10, b: 30 };
  const [y, m] = opts.month.split('-').map(Number) as [number, number];
  const daysInMonth = new Date(Date.UTC(y, m, 0)).getUTCDate();
  const byDay = new Map(opts.days.map((d) => [Number(d.day.slice(8, 10)), d.n]));
  const today = new Date().getUTCDate();
  const top = Math.max(opts.limit, opts.used, 1);
  const x = (d: number) => pad.l + ((d - 1) / Math.max(1, daysInMonth - 1)) * (W - pad.l - pad.r);
  const yv = (v: number) => H - pad.b - (v / top) * (H - pad.t - pad.b);
  let sum = 0;
  const points: string[] = [];
  for (let d = 1; d <= Math.min(today, daysInMonth); d++) {
    sum += byDay.get(d) ?? 0;
    points.push(`${x(d).toFixed(1)},${yv(sum).toFixed(1)}`);
  }
  const summary = `${opts.used} of ${opts.limit} messages used this month`;
  return html`<svg
    class="chart"
    viewBox="0 0 ${W} ${H}"
    width="${W}"
    height="${H}"
    role="img"
    aria-labelledby="usage-title usage-desc"
  >
    <title id="usage-title">Usage this month</title>
    <desc id="usage-desc">${summary}; the line is the day-by-day cumulative count, the dashed line the quota.</desc>
    <line x1="${pad.l}" y1="${H - pad.b}" x2="${W - pad.r}" y2="${H - pad.b}" stroke="#555" />
    <line x1="${pad.l}" y1="${pad.t}" x2="${pad.l}" y2="${H - pad.b}" stroke="#555" />
    <line
      x1="${pad.l}"
      y1="${yv(opts.limit)}"
      x2="${W - pad.r}"
      y2="${yv(opts.limit)}"
      stroke="#b00020"
      stroke-dasharray="6 4"
    />
    <text x="${pad.l + 4}" y="${yv(opts.limit) - 4}" font-size="12" fill="#b00020">quota ${opts.limit}</text>
    <text x="4" y="${H - pad.b}" font-size="12" fill="#333">0</text>
    <text x="${pad.l}" y="${H - 8}" font-size="12" fill="#333">day 1</text>
    <text x="${W - pad.r - 40}" y="${H - 8}" font-size="12" fill="#333">day ${daysInMonth}</text>
    <polyline points="${points.join(' ')}" fill="none" stroke="#0b5fff" stroke-width="2" />
  </svg>`;
}
