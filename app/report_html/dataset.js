/* The qa dataset report: a triage table of tasks drawn from the embedded JSON (a DatasetReport plus, per row,
   its link, top finding and proposal state), sortable by any column and filtered by text, verdict and rule.
   No library; text always goes in via textContent. */
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("qa-data").textContent);
  const FIXED = D.fixed_prefix || "";
  const RANK = { findings: 0, invalid: 1, out_of_band: 2, incomplete: 3, awaiting_approval: 4, clean: 5 };
  const SEV = { critical: 0, error: 1, warning: 2, info: 3 };

  const SVGNS = "http://www.w3.org/2000/svg";
  function s(tag, attrs) {
    const el = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
    return el;
  }
  const badge = (text, cls) => h("span", { class: "badge " + (cls || "") }, text);
  const verdictOf = (t) => t.verdict || "not run";
  const fmt = (x, d = 2) => (x === null || x === undefined ? "–" : Number(x).toFixed(d));

  const state = { q: "", verdict: "", rule: "", sort: "verdict", dir: 1 };

  function header() {
    const sm = D.summary || {};
    document.getElementById("top").append(
      h("h1", null, "qa dataset ", h("span", { class: "id" }, D.dataset_run_id)),
      h("div", { class: "meta" }, (sm.tasks || 0) + " task(s) · exit " + D.exit_code,
        sm.seconds !== null && sm.seconds !== undefined ? " · " + fmt(sm.seconds, 0) + " s" : "",
        " · generated " + D.generated_at, " · schema " + D.schema_version,
        (D.paths || []).length ? " · " + D.paths.join(", ") : ""));
  }

  function summary() {
    const sm = D.summary || {};
    const counts = h("div", { class: "counts" });
    for (const [v, n] of Object.entries(sm.by_verdict || {}).sort((a, b) => (RANK[a[0]] ?? 9) - (RANK[b[0]] ?? 9))) {
      counts.append(badge(v + " " + n, "v-" + v + (state.verdict === v ? " on" : "")));
      counts.lastChild.dataset.verdict = v;
      counts.lastChild.addEventListener("click", () => { setVerdict(state.verdict === v ? "" : v); });
    }
    const el = document.getElementById("summary");
    el.replaceChildren(h("h2", null, "Summary"),
      h("div", null, h("span", { class: "exit", id: "exit-code" }, "exit " + D.exit_code), " ",
        h("span", { class: "muted" }, exitMeaning(D.exit_code))), counts);
  }
  function exitMeaning(code) {
    return { 0: "every task clean or in band", 1: "a task has findings", 2: "bad input",
             3: "some tasks could not finish", 4: "proposals await approval" }[code] || "";
  }

  function rules() {
    const body = document.querySelector("#rules .body");
    const entries = Object.entries((D.summary || {}).by_rule || {}).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    if (!entries.length) { body.replaceChildren(h("p", { class: "muted" }, "no rule fired on any task")); return; }
    const total = Math.max(1, (D.summary || {}).tasks || D.tasks.length);
    const sev = {};
    for (const c of D.conventions || []) sev[c.rule] = c.severity;
    for (const t of D.tasks) for (const f of t.findings) sev[f.rule] = f.severity;
    const tbl = h("table", { id: "rule-counts" }, h("tr", null, h("th", null, "rule"), h("th", null, "severity"),
      h("th", null, "tasks"), h("th", null, "")));
    for (const [rule, n] of entries) {
      tbl.append(h("tr", { "data-rule": rule, class: state.rule === rule ? "on" : "", on: { click: () => setRule(state.rule === rule ? "" : rule) } },
        h("td", { class: "id" }, rule), h("td", null, sev[rule] ? badge(sev[rule], "sev-" + sev[rule]) : ""),
        h("td", { class: "num" }, n), h("td", null, h("span", { class: "rulebar", style: "width:" + Math.round(240 * n / total) + "px" }))));
    }
    /* a rule that warns on most tasks is said once (app/dataset_conventions.py): its warnings are not in the rows */
    const conv = (D.conventions || []).map((c) => h("p", { class: "convention" }, badge(c.severity, "sev-" + c.severity), " ",
      h("span", { class: "id" }, c.rule), " ", c.summary + " (left out of each task's findings below; every task is named in the JSON)"));
    body.replaceChildren(...conv, tbl);
  }

  /* pass@1 as a point on a 0..1 line with the band shaded (and the number beside it). */
  function passCell(t) {
    if (t.pass_at_1 === null || t.pass_at_1 === undefined) return h("span", { class: "muted" }, "–");
    const W = 90, H = 12, svg = s("svg", { class: "pband", width: W, height: H, viewBox: `0 0 ${W} ${H}` });
    svg.append(s("line", { x1: 0, x2: W, y1: H / 2, y2: H / 2, stroke: "#c9ced6" }));
    if (t.band) svg.append(s("rect", { class: "band", x: t.band[0] * W, y: 1, width: (t.band[1] - t.band[0]) * W, height: H - 2 }));
    svg.append(s("circle", { class: "point" + (t.in_band === false ? " out" : ""), cx: Math.min(W - 3, Math.max(3, t.pass_at_1 * W)), cy: H / 2, r: 3.5 }));
    const label = fmt(t.pass_at_1) + (t.band ? " [" + t.band[0] + "–" + t.band[1] + "]" : "");
    return h("span", { title: t.in_band === null ? "" : t.in_band ? "in band" : "out of band" }, svg, " ", label);
  }

  function topCell(t) {
    if (t.error) return h("span", null, badge("error", "sev-error"), " ", t.error.split("\n")[0].slice(0, 140));
    if (!t.top) return h("span", { class: "muted" }, "");
    const f = t.top, fixed = f.summary.startsWith(FIXED);
    const more = t.findings.length > 1 ? h("span", { class: "muted" }, " +" + (t.findings.length - 1)) : null;
    return h("span", { title: f.summary }, f.severity ? badge(f.severity, "sev-" + f.severity) : null, " ",
      h("span", { class: "id" + (fixed ? " fixed" : "") }, f.rule), more);
  }

  const COLUMNS = [
    { key: "task", title: "task", value: (t) => t.name.toLowerCase(),
      cell: (t) => h("td", { class: "task" }, t.link ? h("a", { href: t.link, class: "report-link" }, t.name) : h("span", { class: "name" }, t.name),
        h("div", { class: "path" }, t.path)) },
    { key: "verdict", title: "verdict", value: (t) => [RANK[t.verdict] ?? 9, t.name],
      cell: (t) => h("td", null, badge(verdictOf(t), "v-" + (t.verdict || "none"))) },
    { key: "finding", title: "top finding", value: (t) => t.top ? [SEV[t.top.severity] ?? 9, t.top.rule] : [t.error ? -1 : 99, ""],
      cell: (t) => h("td", null, topCell(t)) },
    { key: "pass", title: "pass@1 vs band", value: (t) => t.pass_at_1 ?? -1, cell: (t) => h("td", { class: "pass" }, passCell(t)) },
    { key: "proposal", title: "proposal", value: (t) => t.proposal_state || "~", cell: (t) => h("td", null, t.proposal_state) },
    { key: "exit", title: "exit", value: (t) => t.exit_code, cell: (t) => h("td", { class: "num" }, t.exit_code) },
    { key: "seconds", title: "s", value: (t) => t.seconds ?? -1, cell: (t) => h("td", { class: "num" }, fmt(t.seconds, 0)) },
    { key: "run", title: "run", value: (t) => t.run_id || "", cell: (t) => h("td", { class: "id" }, t.run_id || "") },
  ];

  function cmp(a, b) {
    if (Array.isArray(a)) { for (let i = 0; i < a.length; i++) { const c = cmp(a[i], b[i]); if (c) return c; } return 0; }
    return a < b ? -1 : a > b ? 1 : 0;
  }

  function matches(t) {
    if (state.verdict && verdictOf(t) !== state.verdict) return false;
    if (state.rule && !t.rules.includes(state.rule)) return false;
    if (!state.q) return true;
    const hay = [t.name, t.path, t.run_id || "", t.verdict || "", t.error || "", ...t.rules].join(" ").toLowerCase();
    return state.q.toLowerCase().split(/\s+/).filter(Boolean).every((w) => hay.includes(w));
  }

  function detail(t) {
    const box = h("div");
    if (t.error) box.append(h("pre", null, t.error));
    for (const f of t.findings) {
      const fixed = f.summary.startsWith(FIXED);
      box.append(h("div", { class: "finding sev-" + (f.severity || "info"), "data-rule": f.rule },
        h("div", null, h("b", { class: "id" + (fixed ? " fixed" : "") }, f.rule), " ", f.label ? badge(f.label) : null, " ",
          f.severity ? badge(f.severity, "sev-" + f.severity) : null, " ",
          f.file ? h("span", { class: "id muted" }, f.file + (f.line ? ":" + f.line : "")) : null),
        h("div", null, f.summary),
        f.evidence ? h("details", null, h("summary", null, "evidence"), h("pre", null, f.evidence)) : null));
    }
    for (const p of t.proposals) {
      box.append(h("div", { class: "revision" },
        h("div", null, "proposal ", h("span", { class: "id" }, (p.version || "").slice(0, 12)), " by ",
          h("span", { class: "id" }, p.proposer || "?"), " · gate " + (p.gate || "not run") + " · " + (p.state || "proposed"),
          p.approved_by ? " by " + p.approved_by : "", p.addresses.length ? " · addresses " + p.addresses.join(", ") : ""),
        p.diff ? h("details", null, h("summary", null, "diff"), h("pre", { class: "diff" }, p.diff)) : null));
    }
    const agents = Object.entries(t.agents || {});  // issue 33: pass@1 per agent/model (qa's and imported)
    if (agents.length) {
      box.append(h("table", { class: "agents" }, h("tr", null, ["agent/model", "passes/n", "pass@1", "95% CI", "source"].map((c) => h("th", null, c))),
        agents.map(([m, r]) => h("tr", null, h("td", { class: "id" }, m), h("td", { class: "num" }, `${r.passes}/${r.n}`),
          h("td", { class: "num" }, fmt(r.pass_at_1)), h("td", { class: "num" }, `[${fmt(r.ci_low)}, ${fmt(r.ci_high)}]`), h("td", null, r.source)))));
    }
    if (t.link) box.append(h("p", null, h("a", { href: t.link }, "the task's own report")));
    return box;
  }

  function table() {
    const thead = document.querySelector("#triage thead"), tbody = document.querySelector("#triage tbody");
    thead.replaceChildren(h("tr", null, COLUMNS.map((c) => h("th", {
      class: "sortable", "data-sort": c.key,
      "aria-sort": state.sort === c.key ? (state.dir > 0 ? "ascending" : "descending") : null,
      on: { click: () => { state.dir = state.sort === c.key ? -state.dir : 1; state.sort = c.key; table(); } },
    }, c.title)), h("th", null, "")));
    const col = COLUMNS.find((c) => c.key === state.sort);
    const rows = D.tasks.filter(matches).sort((a, b) => state.dir * cmp(col.value(a), col.value(b)) || cmp(a.path, b.path));
    const out = [];
    for (const t of rows) {
      const open = h("button", { class: "open" }, "details");
      const tr = h("tr", { class: "task-row", "data-task": t.path, "data-verdict": verdictOf(t) },
        COLUMNS.map((c) => c.cell(t)), h("td", null, open));
      const dr = h("tr", { class: "detail-row", "data-task": t.path, hidden: true }, h("td", { colspan: COLUMNS.length + 1 }));
      open.addEventListener("click", () => {
        if (!dr.firstChild.firstChild) dr.firstChild.append(detail(t));
        dr.hidden = !dr.hidden;
      });
      out.push(tr, dr);
    }
    tbody.replaceChildren(...out);
    document.getElementById("shown").textContent = rows.length + " of " + D.tasks.length + " task(s) shown";
  }

  function setVerdict(v) { state.verdict = v; document.getElementById("f-verdict").value = v; summary(); table(); }
  function setRule(r) { state.rule = r; document.getElementById("f-rule").value = r; rules(); table(); }

  function filters() {
    const fv = document.getElementById("f-verdict"), fr = document.getElementById("f-rule"), q = document.getElementById("q");
    for (const v of [...new Set(D.tasks.map(verdictOf))].sort()) fv.append(h("option", { value: v }, v));
    for (const r of Object.keys((D.summary || {}).by_rule || {}).sort()) fr.append(h("option", { value: r }, r));
    fv.addEventListener("change", () => setVerdict(fv.value));
    fr.addEventListener("change", () => setRule(fr.value));
    q.addEventListener("input", () => { state.q = q.value.trim(); table(); });
  }

  header(); summary(); rules(); filters(); table();
  document.documentElement.dataset.ready = "1";
})();
