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
