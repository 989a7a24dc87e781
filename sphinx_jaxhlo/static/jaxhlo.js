// sphinx-jaxhlo: target tabs. Without JavaScript every panel shows, titled.
// With it: ARIA tabs, arrow/Home/End keys, and the chosen target sticks
// across every example on the page and across pages (sessionStorage).
(function () {
  "use strict";
  var STORE = "jaxhlo-tab-";

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
    document.querySelectorAll('.jaxhlo-tabs[data-group="' + group + '"]').forEach(function (ts) {
      select(ts, key, ts === origin);
    });
    try { sessionStorage.setItem(STORE + group, key); } catch (e) { /* storage may be off */ }
  }

  function init() {
    document.querySelectorAll(".jaxhlo-tabs").forEach(function (tabset) {
      tabset.classList.add("jaxhlo-js");
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
    });
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
