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
