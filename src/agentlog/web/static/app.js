// agentlog web viewer: the only script (CSP: script-src 'self'). Copy buttons,
// expand/collapse all, search-word highlighting.
"use strict";
document.addEventListener("click", (event) => {
  const button = event.target.closest("button.expand-all");
  if (!button) return;
  const open = button.dataset.open === "1";
  for (const details of document.querySelectorAll("ol.transcript details")) details.open = open;
});
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

// A transcript opened from a search (?hl=word prefix* …): its words marked where
// they occur as words (the search's own rule: letters and digits, any case); a
// run of Chinese, Japanese or Korean, or an emoji, wherever it occurs
// (agentlog.index.fts indexes those as substrings).
(() => {
  const unspaced = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Extended_Pictographic}]/u;
  const words = (new URLSearchParams(location.search).get("hl") || "")
    .split(/\s+/).filter(Boolean)
    .map((w) => {
      const body = w.replace(/\*$/, "\u0001").replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace("\u0001", "[\\p{L}\\p{N}]*");
      return unspaced.test(w) ? body : `(?<![\\p{L}\\p{N}])${body}(?![\\p{L}\\p{N}])`;
    });
  const transcript = document.querySelector("ol.transcript");
  if (!words.length || !transcript) return;
  const pattern = new RegExp(`(${words.join("|")})`, "giu");
  const walker = document.createTreeWalker(transcript, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) nodes.push(walker.currentNode);
  for (const node of nodes) {
    const text = node.nodeValue;
    pattern.lastIndex = 0;
    if (!pattern.test(text)) continue;
    const fragment = document.createDocumentFragment();
    let last = 0;
    text.replace(pattern, (match, _word, offset) => {
      fragment.append(text.slice(last, offset));
      const mark = document.createElement("mark");
      mark.textContent = match;
      fragment.append(mark);
      last = offset + match.length;
      return match;
    });
    fragment.append(text.slice(last));
    node.replaceWith(fragment);
  }
})();
