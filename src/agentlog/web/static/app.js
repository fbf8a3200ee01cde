// agentlog web viewer: the only script (CSP: script-src 'self'). Copy buttons,
// expand/collapse all, search-word highlighting, live pages.
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
// (agentlog.index.fts indexes those as substrings).  A text where no word occurs
// is looked at again without its diacritics, one character for one (the index's
// remove_diacritics; agentlog.index.snippets._fold), so "cafe" marks "Café".
(() => {
  const fold = (text) => text.replace(/[^\u0000-\u007f]/g, (c) => c.normalize("NFD")[0]);
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
    let source = text;
    pattern.lastIndex = 0;
    if (!pattern.test(text)) {
      source = fold(text);
      pattern.lastIndex = 0;
      if (source === text || !pattern.test(source)) continue;
    }
    const fragment = document.createDocumentFragment();
    let last = 0;
    source.replace(pattern, (match, _word, offset) => {
      fragment.append(text.slice(last, offset));
      const mark = document.createElement("mark");
      mark.textContent = text.slice(offset, offset + match.length);
      fragment.append(mark);
      last = offset + match.length;
      return match;
    });
    fragment.append(text.slice(last));
    node.replaceWith(fragment);
  }
})();

// agentlog web viewer, live pages (CSP: script-src 'self'): an element with
// data-live="<event stream URL>" (the board, or the last page of a transcript)
// listens to Server-Sent Events; each "update" fetches this page again and swaps
// in what is new.  One fetch at a time: updates arriving meanwhile are coalesced
// into one more fetch.  EventSource reconnects by itself (the stream sets retry);
// after a reconnect the page is fetched once, in case an update was missed.
"use strict";
(() => {
  const target = document.querySelector("[data-live]");
  if (!target || !window.EventSource || !window.fetch) return;
  let busy = false;
  let again = false;

  const keepOpen = (from, to) => {
    const was = from.querySelectorAll("details");
    to.querySelectorAll("details").forEach((d, i) => { if (was[i] && was[i].open) d.open = true; });
  };

  const mergeTranscript = (doc) => {
    const fresh = doc.querySelector("ol.transcript");
    if (!fresh) return;
    const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
    let added = false;
    for (const li of fresh.querySelectorAll(":scope > li.msg")) {
      const old = document.getElementById(li.id);
      const copy = document.importNode(li, true);
      if (!old) {
        target.querySelectorAll(":scope > li.empty").forEach((e) => e.remove());
        target.append(copy);
        added = true;
      } else if (old.innerHTML !== li.innerHTML) {
        keepOpen(old, copy);
        old.replaceWith(copy);
      }
    }
    const status = doc.getElementById("live-status");
    const here = document.getElementById("live-status");
    if (status && here) here.replaceWith(document.importNode(status, true));
    if (added && atBottom) window.scrollTo(0, document.body.scrollHeight);
  };

  const merge = (doc) => {
    if (target.tagName === "OL") return mergeTranscript(doc);
    const fresh = doc.getElementById(target.id);
    if (fresh) target.replaceChildren(...Array.from(fresh.childNodes, (n) => document.importNode(n, true)));
  };

  const refresh = async () => {
    if (busy) { again = true; return; }
    busy = true;
    try {
      do {
        again = false;
        const response = await fetch(location.href, { credentials: "same-origin" });
        if (!response.ok) break;
        merge(new DOMParser().parseFromString(await response.text(), "text/html"));
      } while (again);
    } catch (error) {
      // the viewer stopped or the network dropped: the next event retries
    } finally {
      busy = false;
    }
  };

  let opened = false;
  const source = new EventSource(target.dataset.live);
  source.addEventListener("update", refresh);
  source.addEventListener("open", () => { if (opened) refresh(); opened = true; });
  document.documentElement.dataset.live = "listening";
})();
