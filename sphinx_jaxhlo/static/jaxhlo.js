// sphinx-jaxhlo: target tabs and source lines, set up by window.jaxhloInit(root)
// for the examples under root (a document or an element).  Loaded as a file
// (a Sphinx page) it sets up the whole page; inlined in a notebook output
// (sphinx_jaxhlo.render.standalone_html) it leaves that to the call after it,
// scoped to the output.  Setting up an element twice does nothing: a tab set
// is marked jaxhlo-js, a traced row or box jaxhlo-watched.
//
// Target tabs.  Without JavaScript every panel shows, titled.  With it: ARIA
// tabs, arrow/Home/End keys, and the chosen target sticks across every example
// on the page and across pages (sessionStorage).
//
// Source lines.  A table row or graph box traced from lines of the example
// carries data-jaxhlo-lines="4 6", and it or its table data-jaxhlo-src="<prefix>"; hovering or
// focusing it highlights the lines <prefix>4 and <prefix>6 of the example's
// source.  Enter on a focused row jumps to its first line.  Without JavaScript
// the links in the rows still jump to the lines (:target).
//
// Module texts.  The optimized HLO, StableHLO and jaxpr of a page live in files
// of their own beside the pages: a collapsed block holds an empty
// <pre data-jaxhlo-key="KEY"> and links the text as a file (what a reader
// without JavaScript gets).  The highlighted text comes from a script that
// calls window.jaxhloText(KEY, {spans} or {text}): a long text's own, which
// its <pre data-jaxhlo-text="URL"> names, or the script its page shares
// among its short texts, which a hidden <div data-jaxhlo-script="URL"
// data-jaxhlo-keys="KEY KEY..."> at the end of the page names.  Opening the
// block adds a <script src=URL> (a script element, unlike fetch(), loads from
// file:// too), once per script; the texts it hands over are kept until
// their blocks open.
(function () {
  "use strict";
  var STORE = "jaxhlo-tab-";
  var TABS_DONE = "jaxhlo-js";
  var HL = "jaxhlo-hl";
  var WATCHED = "jaxhlo-watched";
  var loading = {};  // script URL -> true while it loads
  var texts = {};  // key -> what its script handed over

  window.jaxhloText = function (key, data) {
    texts[key] = data;
    document.querySelectorAll('pre[data-jaxhlo-key="' + key + '"][data-jaxhlo-state="loading"]').forEach(fill);
  };

  function fill(pre) {
    var data = texts[pre.getAttribute("data-jaxhlo-key")];
    if (Array.isArray(data.spans)) { pre.textContent = ""; pre.appendChild(spans(data.spans)); }
    else { pre.textContent = String(data.text); }
    pre.setAttribute("data-jaxhlo-state", "loaded");
  }

  // [class, text, class, text, ...] as Pygments' HTML formatter would class
  // them ("" for none); each text is set as text, never parsed as HTML.
  function spans(list) {
    var out = document.createDocumentFragment();
    for (var i = 0; i + 1 < list.length; i += 2) {
      var text = String(list[i + 1]);
      if (list[i]) {
        var span = document.createElement("span");
        span.className = String(list[i]);
        span.textContent = text;
        out.appendChild(span);
      } else {
        out.appendChild(document.createTextNode(text));
      }
    }
    return out;
  }

  function scriptOf(pre, key) {
    var own = pre.getAttribute("data-jaxhlo-text");
    if (own) { return own; }
    var shared = /^[0-9a-f]+$/.test(key) && document.querySelector('[data-jaxhlo-script][data-jaxhlo-keys~="' + key + '"]');
    return shared ? shared.getAttribute("data-jaxhlo-script") : null;
  }

  // The script at url has run (or failed): a block still waiting on it gets a message.
  function settle(url, message) {
    delete loading[url];
    document.querySelectorAll('pre[data-jaxhlo-key][data-jaxhlo-state="loading"]').forEach(function (p) {
      if (scriptOf(p, p.getAttribute("data-jaxhlo-key")) !== url) { return; }
      p.setAttribute("data-jaxhlo-state", "failed");
      p.textContent = message;
    });
  }

  function loadText(pre) {
    var key = pre.getAttribute("data-jaxhlo-key");
    if (!key || pre.getAttribute("data-jaxhlo-state")) { return; }
    var url = scriptOf(pre, key);
    if (!url && !texts[key]) { return; }
    pre.setAttribute("data-jaxhlo-state", "loading");
    if (texts[key]) { fill(pre); return; }
    if (loading[url]) { return; }
    loading[url] = true;
    var script = document.createElement("script");
    script.src = url;
    script.async = true;
    script.onload = function () {
      settle(url, "This text is missing from its script (the site was built again meanwhile?): reload the page, or open it as a file (the link above).");
    };
    script.onerror = function () {
      settle(url, "The text could not be loaded; open it as a file (the link above).");
    };
    (document.head || document.documentElement).appendChild(script);
  }

  function initLazy(details) {
    if (details.classList.contains(WATCHED)) { return; }
    details.classList.add(WATCHED);
    var pre = details.querySelector("pre[data-jaxhlo-key]");
    if (!pre) { return; }
    if (details.open) { loadText(pre); }
    details.addEventListener("toggle", function () { if (details.open) { loadText(pre); } });
  }

  function select(tabset, key, focus) {
    var tabs = tabset.querySelectorAll(":scope > .jaxhlo-tablist > .jaxhlo-tab");
    var panels = tabset.querySelectorAll(":scope > .jaxhlo-panel");
    var found = false;
    tabs.forEach(function (t) { if (t.dataset.key === key) { found = true; } });
    if (!found) { return false; }
    tabs.forEach(function (t) {
      var on = t.dataset.key === key;
      t.setAttribute("aria-selected", on ? "true" : "false");
      t.tabIndex = on ? 0 : -1;
      if (on && focus) { t.focus(); }
    });
    panels.forEach(function (p) { p.hidden = p.dataset.key !== key; });
    return true;
  }

  function selectEverywhere(group, key, origin) {
    document.querySelectorAll('.jaxhlo-tabs.' + TABS_DONE + '[data-group="' + group + '"]').forEach(function (ts) {
      select(ts, key, ts === origin);
    });
    try { sessionStorage.setItem(STORE + group, key); } catch (e) { /* storage may be off */ }
  }

  function initTabs(tabset) {
    if (tabset.classList.contains(TABS_DONE)) { return; }
    tabset.classList.add(TABS_DONE);
    var group = tabset.dataset.group;
    var tabs = Array.prototype.slice.call(tabset.querySelectorAll(":scope > .jaxhlo-tablist > .jaxhlo-tab"));
    var saved = null;
    try { saved = sessionStorage.getItem(STORE + group); } catch (e) { saved = null; }
    if (!(saved && select(tabset, saved, false)) && tabs.length) { select(tabset, tabs[0].dataset.key, false); }
    tabs.forEach(function (tab, i) {
      tab.addEventListener("click", function () { selectEverywhere(group, tab.dataset.key, tabset); });
      tab.addEventListener("keydown", function (ev) {
        var next = null;
        if (ev.key === "ArrowRight") { next = tabs[(i + 1) % tabs.length]; }
        else if (ev.key === "ArrowLeft") { next = tabs[(i - 1 + tabs.length) % tabs.length]; }
        else if (ev.key === "Home") { next = tabs[0]; }
        else if (ev.key === "End") { next = tabs[tabs.length - 1]; }
        if (next) { ev.preventDefault(); selectEverywhere(group, next.dataset.key, tabset); }
      });
    });
  }

  function lines(el) {
    var owner = el.closest("[data-jaxhlo-src]");
    var src = owner ? owner.getAttribute("data-jaxhlo-src") : "";
    var out = [];
    (el.getAttribute("data-jaxhlo-lines") || "").split(/\s+/).forEach(function (n) {
      var line = n ? document.getElementById(src + n) : null;
      if (line) { out.push(line); }
    });
    return out;
  }

  function mark(el, on) {
    lines(el).forEach(function (line) {
      var count = (parseInt(line.getAttribute("data-jaxhlo-hl") || "0", 10) || 0) + (on ? 1 : -1);
      if (count > 0) {
        line.setAttribute("data-jaxhlo-hl", String(count));
        line.classList.add(HL);
      } else {
        line.removeAttribute("data-jaxhlo-hl");
        line.classList.remove(HL);
      }
    });
  }

  function watch(el) {
    if (el.classList.contains(WATCHED)) { return; }
    el.classList.add(WATCHED);
    var state = { hover: false, focus: false };
    function set(kind, value) {
      var before = state.hover || state.focus;
      state[kind] = value;
      var after = state.hover || state.focus;
      if (before !== after) { mark(el, after); }
    }
    el.addEventListener("mouseenter", function () { set("hover", true); });
    el.addEventListener("mouseleave", function () { set("hover", false); });
    el.addEventListener("focusin", function () { set("focus", true); });
    el.addEventListener("focusout", function (ev) {
      if (!ev.relatedTarget || !el.contains(ev.relatedTarget)) { set("focus", false); }
    });
    if (el.tagName === "TR") {
      el.addEventListener("keydown", function (ev) {
        if (ev.key !== "Enter" || ev.target !== el) { return; }
        var link = el.querySelector("td.jaxhlo-lines a");
        if (link) { ev.preventDefault(); link.click(); }
      });
    }
  }

  window.jaxhloInit = function (root) {
    if (!root) { return; }
    document.documentElement.classList.add("jaxhlo-scripted");
    root.querySelectorAll(".jaxhlo-tabs").forEach(initTabs);
    root.querySelectorAll("[data-jaxhlo-lines]").forEach(watch);
    root.querySelectorAll("details.jaxhlo-lazy").forEach(initLazy);
  };

  var own = document.currentScript;
  if (own && !own.src) { return; }  // inlined: the caller picks the root
  function initPage() { window.jaxhloInit(document); }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", initPage); } else { initPage(); }
})();
