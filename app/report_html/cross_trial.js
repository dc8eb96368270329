/* Issue 33: the run report's "Across trials" section: pass@1 per agent/model (qa's own solver models and the
   imported harnesses' agent/model pairs) with its Wilson interval against the band, the per-test table
   (test x agent: failures, fails alone) and what was imported (stale trials, files that could not be read).
   Drawn from the same embedded JSON as report.js; text goes in as text nodes (dom.js h()). */
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("qa-data").textContent);
  const X = D.cross_trial;
  const sec = document.getElementById("cross-trial");
  if (!X || !sec) return;
  const f2 = (x) => (x === null || x === undefined ? "–" : Number(x).toFixed(2));
  const band = D.band || [];
  sec.append(h("h2", null, "Across trials"));
  const models = Object.entries(X.models || {});
  if (models.length) {
    sec.append(h("h3", null, "pass@1 per agent/model" + (band.length ? ` (band ${f2(band[0])}–${f2(band[1])})` : "")),
      h("table", { id: "agent-rates" },
        h("tr", null, ["agent/model", "passes/n", "pass@1", "95% CI", "band", "infra", "source"].map((c) => h("th", null, c))),
        models.map(([m, r]) => h("tr", null, h("td", null, m), h("td", { class: "num" }, `${r.passes}/${r.n}`),
          h("td", { class: "num" }, f2(r.pass_at_1)), h("td", { class: "num" }, `[${f2(r.ci_low)}, ${f2(r.ci_high)}]`),
          h("td", null, r.band_decision || r.band || ""), h("td", { class: "num" }, r.infra || 0),
          h("td", null, r.stop_reason === "imported" ? "imported" : "qa")))));
  }
  const tests = X.tests || [];
  if (tests.length) {
    sec.append(h("h3", null, "Failures per test and agent"),
      h("table", { id: "test-table" },
        h("tr", null, ["test", "agent/model", "failed", "fails alone", "trials"].map((c) => h("th", null, c))),
        tests.map((r) => h("tr", { class: r.fails_alone ? "alone" : null }, h("td", null, r.test), h("td", null, r.agent),
          h("td", { class: "num" }, r.failures), h("td", { class: "num" }, r.fails_alone), h("td", { class: "num" }, r.trials)))));
  }
  const imp = X.imported;
  if (imp) {
    sec.append(h("p", { id: "imported-note" }, `imported: ${imp.counted} trial(s) counted, ${imp.stale} stale, ` +
      `${imp.other_tasks} of other tasks`));
    if (imp.stale_note) sec.append(h("p", { class: "muted" }, imp.stale_note));
    for (const p of imp.problems || []) sec.append(h("p", { class: "problem" }, `could not read ${p.path}: ${p.message}`));
  }
})();
