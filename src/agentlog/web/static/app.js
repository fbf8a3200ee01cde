// agentlog web viewer: the only script (CSP: script-src 'self'). Copy buttons.
"use strict";
document.addEventListener("click", (event) => {
  const button = event.target.closest("button.copy");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent).then(() => {
    button.textContent = "copied";
    setTimeout(() => { button.textContent = "copy"; }, 1500);
  });
});
