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
