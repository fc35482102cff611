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
