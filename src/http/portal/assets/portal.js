// Progressive enhancement only: every form works without this file.
// Copy buttons copy the text of the element they name.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const target = document.getElementById(button.getAttribute('data-copy'));
  if (!target || !navigator.clipboard) return;
  navigator.clipboard.writeText(target.textContent.trim()).then(
    () => {
      button.textContent = 'Copied';
    },
    () => {
      button.textContent = 'Copy failed: select the text';
    },
  );
});

// A table wider than its place scrolls inside its own box (portal.css). One that holds no link or
// button gets a tab stop, so that a keyboard can scroll it (arrow keys); one that fits gets none.
// Without this file chromium and firefox make such a box focusable themselves.
const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex]';
function markScrollingTables() {
  for (const table of document.querySelectorAll('table')) {
    const needsStop = table.scrollWidth > table.clientWidth && !table.querySelector(FOCUSABLE);
    if (needsStop && !table.hasAttribute('tabindex')) {
      table.setAttribute('tabindex', '0');
      table.setAttribute('data-scroll-stop', '');
    } else if (!needsStop && table.hasAttribute('data-scroll-stop')) {
      table.removeAttribute('tabindex');
      table.removeAttribute('data-scroll-stop');
    }
  }
}
markScrollingTables();
window.addEventListener('resize', markScrollingTables);
document.addEventListener('htmx:afterSettle', markScrollingTables);

// The template reply's preview (conversation page): the chosen template's text with the variables
// typed so far, one per line, in order; a variable not given yet stays {{n}}. The server draws the
// same preview for the Preview button (templates/template-send.ts, fillText).
function fillTemplateText(text, values) {
  const names = [...new Set([...text.matchAll(/\{\{([^{}]*)\}\}/g)].map((m) => m[1]))];
  const ordered = names.every((n) => /^\d+$/.test(n)) ? [...names].sort((a, b) => Number(a) - Number(b)) : names;
  return text.replace(/\{\{([^{}]*)\}\}/g, (whole, name) => values[ordered.indexOf(name)] ?? whole);
}
function drawTemplatePreview() {
  const select = document.getElementById('reply-template');
  const box = document.getElementById('reply-variables');
  const preview = document.getElementById('reply-preview');
  if (!select || !box || !preview) return;
  const option = select.selectedOptions[0];
  if (!option) return;
  const values = box.value
    .split(/\r?\n/)
    .map((v) => v.trim())
    .filter((v) => v !== '');
  const header = preview.querySelector('[data-preview="header"]');
  const body = preview.querySelector('[data-preview="body"]');
  if (header) header.textContent = fillTemplateText(option.getAttribute('data-header') ?? '', []);
  if (body) body.textContent = fillTemplateText(option.getAttribute('data-body') ?? '', values);
  const footer = preview.querySelector('[data-preview="footer"]');
  if (footer && option.getAttribute('data-footer') !== null) footer.textContent = option.getAttribute('data-footer');
}
document.addEventListener('input', (event) => {
  if (event.target instanceof Element && ['reply-template', 'reply-variables'].includes(event.target.id))
    drawTemplatePreview();
});
document.addEventListener('change', (event) => {
  if (event.target instanceof Element && event.target.id === 'reply-template') drawTemplatePreview();
});

// A text field with a provider limit (data-max-chars) counts its characters as they are typed, in
// the element data-counter names, and is invalid while over the limit (the server refuses it too).
function countCharacters(field) {
  const max = Number(field.getAttribute('data-max-chars'));
  const counter = document.getElementById(field.getAttribute('data-counter'));
  const length = Array.from(field.value).length;
  const over = length - max;
  const n = (x) => x.toLocaleString('en-US');
  if (counter) {
    counter.textContent =
      over > 0
        ? `${n(length)} characters: ${n(over)} over the limit of ${n(max)}. Shorten the text or send it in parts.`
        : `${n(length)} of at most ${n(max)} characters.`;
    counter.classList.toggle('warn', over > 0);
  }
  field.setCustomValidity(over > 0 ? `At most ${n(max)} characters: this text has ${n(length)}.` : '');
}
document.addEventListener('input', (event) => {
  if (event.target instanceof HTMLTextAreaElement && event.target.hasAttribute('data-max-chars'))
    countCharacters(event.target);
});
for (const field of document.querySelectorAll('textarea[data-max-chars]')) countCharacters(field);

// A form marked data-swap-errors shows a refusal (a 4xx page) in place too: htmx swaps only 2xx
// answers by default. After such a swap, the element marked data-focus-after-swap takes focus.
document.addEventListener('htmx:beforeSwap', (event) => {
  const elt = event.detail.requestConfig && event.detail.requestConfig.elt;
  if (elt instanceof Element && elt.closest('[data-swap-errors]') && event.detail.xhr.status >= 400) {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});
document.addEventListener('htmx:afterSettle', () => {
  const target = document.querySelector('[data-focus-after-swap]');
  if (target instanceof HTMLElement) target.focus();
});

// Times are written in UTC. The "Local times" button (shown only with this file) shows every
// <time datetime> in the browser's time zone instead, with its offset; the choice is remembered.
const TIMES_KEY = 'chatgate-portal-times';
const pad = (n) => String(n).padStart(2, '0');
function localText(d) {
  const offset = -d.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const zone = `UTC${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} (${zone})`;
}
function localTimes() {
  try {
    return localStorage.getItem(TIMES_KEY) === 'local';
  } catch {
    return false;
  }
}
function showTimes() {
  const local = localTimes();
  for (const t of document.querySelectorAll('time[datetime]')) {
    if (!t.hasAttribute('data-utc')) t.setAttribute('data-utc', t.textContent);
    const d = new Date(t.getAttribute('datetime'));
    if (Number.isNaN(d.getTime())) continue;
    t.textContent = local ? localText(d) : t.getAttribute('data-utc');
  }
  const button = document.getElementById('time-toggle');
  if (button) {
    button.hidden = false;
    button.setAttribute('aria-pressed', local ? 'true' : 'false');
  }
}
document.addEventListener('click', (event) => {
  if (!(event.target instanceof Element) || !event.target.closest('#time-toggle')) return;
  try {
    localStorage.setItem(TIMES_KEY, localTimes() ? 'utc' : 'local');
  } catch {
    return;
  }
  showTimes();
});
showTimes();
document.addEventListener('htmx:afterSettle', showTimes);
