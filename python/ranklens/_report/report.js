// ranklens report: draws the page from the JSON in #ranklens-data.
// Only what is on screen is rendered: one page of the query table, one query's
// rankings; each chart is one or two SVG paths, however many queries there are.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("ranklens-data").textContent);
  const PAGE = 100;
  const SVGNS = "http://www.w3.org/2000/svg";
  const nq = D.queries.length;
  const state = {
    a: 0,
    b: Math.min(1, D.runs.length - 1),
    metric: 0,
    key: "diff",
    dir: 1,
    filter: "",
    page: 0,
    depth: Math.min(10, D.depth),
    query: -1,
    order: [],
  };

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "cls") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    for (const kid of kids) e.append(kid);
    return e;
  }

  // Display only: the data keep full precision (data-value holds it).
  function fmt(x, digits) {
    if (x === null || x === undefined) return "–";
    if (typeof x === "string") return x === "inf" ? "∞" : x === "-inf" ? "−∞" : x;
    if (typeof x === "boolean") return x ? "yes" : "no";
    if (Number.isInteger(x)) return String(x);
    return x.toFixed(digits === undefined ? 4 : digits);
  }

  function fmtP(p) {
    if (typeof p === "number" && p > 0 && p < 1e-4) return p.toExponential(1);
    return fmt(p);
  }

  function numCell(x, extra) {
    const td = el("td", { text: fmt(x) });
    td.dataset.value = x === null ? "" : String(x);
    if (extra) td.className = extra;
    return td;
  }

  // -- header and summary ---------------------------------------------------
  function renderSettings() {
    const s = D.settings;
    const parts = [
      `${nq} queries`,
      `${D.runs.length} runs`,
      `test: ${s.test}`,
      `correction: ${s.correction}`,
      `alpha: ${s.alpha}`,
      `relevance level: ${D.level}`,
      `qrels: ${D.qrels}`,
      `rankings to depth ${D.depth}`,
      `ranklens ${D.version}`,
    ];
    if (s.baseline) parts.splice(2, 0, `baseline: ${s.baseline}`);
    document.getElementById("settings").textContent = parts.join(" · ");
  }

  function renderSummary() {
    const f = D.summaryFields;
    const col = (name) => f.indexOf(name);
    const head = ["metric", "run", "other", "mean", "other mean", "diff", "p", "p adj.",
      "significant", "effect size", "CI low", "CI high", "W/T/L"];
    const table = document.getElementById("summary");
    table.append(el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { text: h })))));
    const body = el("tbody");
    for (const row of D.summary) {
      const tr = el("tr");
      tr.dataset.metric = row[col("metric")];
      tr.dataset.run = row[col("run")];
      tr.dataset.other = row[col("other")];
      const diff = row[col("diff")];
      const sig = row[col("significant")];
      tr.append(
        el("td", { text: row[col("metric")] }),
        el("td", { text: row[col("run")] }),
        el("td", { text: row[col("other")] }),
        numCell(row[col("mean")]),
        numCell(row[col("other_mean")]),
        numCell(diff, (diff > 0 ? "win" : diff < 0 ? "loss" : "") + (sig ? " sig" : "")),
        numCell(row[col("p_value")]),
        numCell(row[col("p_adjusted")], sig ? "sig" : ""),
        el("td", { text: sig ? "yes" : "no" }),
        numCell(row[col("effect_size")]),
        numCell(row[col("ci_low")]),
        numCell(row[col("ci_high")]),
        el("td", { text: `${row[col("wins")]}/${row[col("ties")]}/${row[col("losses")]}` }),
      );
      tr.children[6].textContent = fmtP(row[col("p_value")]);
      tr.children[7].textContent = fmtP(row[col("p_adjusted")]);
      body.append(tr);
    }
    table.append(body);
  }

  // Shown only when some run has tied scores (tieBounds[run] is null otherwise).
  function renderTieBounds() {
    const rows = D.runs.map((name, r) => [name, D.tieBounds[r]]).filter(([, b]) => b);
    if (!rows.length) return;
    const table = document.getElementById("tie-bounds");
    const head = ["run"];
    for (const m of D.metrics) head.push(`${m} (trec)`, "best", "worst");
    table.append(el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { text: h })))));
    const body = el("tbody");
    for (const [name, bounds] of rows) {
      const tr = el("tr", {}, el("td", { text: name }));
      for (const [mean, best, worst] of bounds) {
        tr.append(numCell(mean), numCell(best), numCell(worst));
      }
      body.append(tr);
    }
    table.append(body);
    document.getElementById("ties-section").hidden = false;
  }

  // -- controls -------------------------------------------------------------
  function fillSelect(id, labels, value, onChange) {
    const s = document.getElementById(id);
    labels.forEach((label, i) => s.append(el("option", { value: String(i), text: String(label) })));
    s.value = String(value);
    s.addEventListener("change", () => onChange(Number(s.value)));
  }

  // -- charts ---------------------------------------------------------------
  function svg(w, h, cls) {
    const s = document.createElementNS(SVGNS, "svg");
    s.setAttribute("width", w);
    s.setAttribute("height", h);
    s.setAttribute("viewBox", `0 0 ${w} ${h}`);
    if (cls) s.setAttribute("class", cls);
    return s;
  }

  function svgEl(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function diffs(m) {
    const A = D.scores[state.a][m];
    const B = D.scores[state.b][m];
    const out = new Float64Array(nq);
    for (let i = 0; i < nq; i++) out[i] = (A[i] ?? NaN) - (B[i] ?? NaN);
    return out;
  }

  function diffChart(m) {
    const W = 420, H = 170, pad = 4;
    const d = diffs(m);
    const order = Array.from(d.keys()).sort((i, j) => cmpNum(d[i], d[j]));
    let lo = 0, hi = 0;
    for (const x of d) if (Number.isFinite(x)) { lo = Math.min(lo, x); hi = Math.max(hi, x); }
    const span = hi - lo || 1;
    const y = (v) => pad + (hi - v) / span * (H - 2 * pad);
    const step = W / Math.max(nq, 1);
    let up = "", down = "";
    order.forEach((qi, k) => {
      const v = d[qi];
      if (!Number.isFinite(v) || v === 0) return;
      const seg = `M${(k + 0.5) * step} ${y(0)}V${y(v)}`;
      if (v > 0) up += seg; else down += seg;
    });
    const s = svg(W, H, "diff");
    const sw = Math.max(step * 0.8, 0.6);
    s.append(
      svgEl("path", { d: up, stroke: "var(--win)", "stroke-width": sw }),
      svgEl("path", { d: down, stroke: "var(--loss)", "stroke-width": sw }),
      svgEl("line", { x1: 0, x2: W, y1: y(0), y2: y(0), stroke: "#8c959f" }),
      svgEl("text", { x: 4, y: 12 }, `+${fmt(hi)}`),
      svgEl("text", { x: 4, y: H - 4 }, fmt(lo)),
    );
    s.addEventListener("click", (ev) => {
      const box = s.getBoundingClientRect();
      const k = Math.floor((ev.clientX - box.left) / box.width * nq);
      if (k >= 0 && k < nq) showQuery(order[k]);
    });
    s.append(svgEl("title", {}, "queries sorted by difference; click a bar to open the query"));
    return s;
  }

  function scatter(m) {
    const S = 170, pad = 18;
    const A = D.scores[state.a][m];
    const B = D.scores[state.b][m];
    let lo = Infinity, hi = -Infinity;
    for (let i = 0; i < nq; i++) {
      for (const v of [A[i], B[i]]) if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    }
    if (!(hi > lo)) { lo = Math.min(lo, 0) || 0; hi = lo + 1; }
    const px = (v) => pad + (v - lo) / (hi - lo) * (S - 2 * pad);
    const py = (v) => S - pad - (v - lo) / (hi - lo) * (S - 2 * pad);
    let above = "", below = "", same = "";
    for (let i = 0; i < nq; i++) {
      if (A[i] === null || B[i] === null) continue;
      const p = `M${px(A[i]).toFixed(1)} ${py(B[i]).toFixed(1)}h0`;
      if (A[i] > B[i]) below += p; else if (A[i] < B[i]) above += p; else same += p;
    }
    const s = svg(S, S, "scatter");
    const dot = { "stroke-width": 4, "stroke-linecap": "round", "stroke-opacity": 0.6 };
    s.append(
      svgEl("line", { x1: px(lo), y1: py(lo), x2: px(hi), y2: py(hi), stroke: "#8c959f" }),
      svgEl("path", Object.assign({ d: same, stroke: "#8c959f" }, dot)),
      svgEl("path", Object.assign({ d: below, stroke: "var(--win)" }, dot)),
      svgEl("path", Object.assign({ d: above, stroke: "var(--loss)" }, dot)),
      svgEl("text", { x: S / 2, y: S - 4, "text-anchor": "middle" }, `A: ${D.runs[state.a]}`),
      svgEl("text", { x: 10, y: S / 2, transform: `rotate(-90 10 ${S / 2})`, "text-anchor": "middle" },
        `B: ${D.runs[state.b]}`),
    );
    s.append(svgEl("title", {}, "one dot per query: A's score across, B's up"));
    return s;
  }

  function renderCharts() {
    const box = document.getElementById("charts");
    box.textContent = "";
    D.metrics.forEach((name, m) => {
      box.append(el("div", { cls: "chart-pair", "data-metric": name },
        el("figure", {}, diffChart(m), el("figcaption", { text: `${name}: A − B per query, sorted` })),
        el("figure", {}, scatter(m), el("figcaption", { text: `${name}: A vs B` }))));
    });
  }

  // -- query table ----------------------------------------------------------
  function cmpNum(x, y) {
    const bx = x === null || Number.isNaN(x), by = y === null || Number.isNaN(y);
    if (bx || by) return bx - by; // missing values last
    return x - y;
  }

  function columns() {
    const m = state.metric, a = state.a, b = state.b;
    const cols = [{ key: "query", label: "query", get: (i) => D.queries[i], text: true }];
    D.runs.forEach((r, k) => cols.push({ key: `run${k}`, label: r, get: (i) => D.scores[k][m][i] }));
    cols.push({
      key: "diff",
      label: "A − B",
      get: (i) => {
        const x = D.scores[a][m][i], y = D.scores[b][m][i];
        return x === null || y === null ? null : x - y;
      },
    });
    cols.push({ key: "firstA", label: "1st rel. A", get: (i) => D.q[i][1][a][1] });
    cols.push({ key: "firstB", label: "1st rel. B", get: (i) => D.q[i][1][b][1] });
    cols.push({ key: "nrel", label: "relevant", get: (i) => D.q[i][0] });
    return cols;
  }

  function sortRows() {
    const cols = columns();
    const col = cols.find((c) => c.key === state.key) || cols[0];
    const needle = state.filter.toLowerCase();
    let rows = [];
    for (let i = 0; i < nq; i++) if (!needle || D.queries[i].toLowerCase().includes(needle)) rows.push(i);
    const v = rows.map((i) => col.get(i));
    const pos = new Map(rows.map((i, k) => [i, k]));
    const dir = state.dir;
    if (col.text) {
      rows.sort((i, j) => dir * (v[pos.get(i)] < v[pos.get(j)] ? -1 : v[pos.get(i)] > v[pos.get(j)] ? 1 : 0));
    } else {
      const idx = rows.map((_, k) => k);
      idx.sort((x, y) => {
        const c = cmpNum(v[x], v[y]);
        const missing = v[x] === null || v[y] === null || Number.isNaN(v[x]) || Number.isNaN(v[y]);
        return (missing ? c : dir * c) || rows[x] - rows[y];
      });
      rows = idx.map((k) => rows[k]);
    }
    state.order = rows;
  }

  function renderTable() {
    const cols = columns();
    const table = document.getElementById("queries");
    const head = table.tHead;
    head.textContent = "";
    const tr = el("tr");
    for (const c of cols) {
      const th = el("th", { text: c.label, "data-key": c.key });
      if (c.key === state.key) th.className = state.dir > 0 ? "sorted-asc" : "sorted-desc";
      th.addEventListener("click", () => {
        state.dir = state.key === c.key ? -state.dir : 1;
        state.key = c.key;
        state.page = 0;
        refreshTable();
      });
      tr.append(th);
    }
    head.append(tr);
    const body = table.tBodies[0];
    const start = state.page * PAGE;
    const rows = state.order.slice(start, start + PAGE);
    const frag = document.createDocumentFragment();
    for (const i of rows) {
      const r = el("tr", { "data-q": D.queries[i] });
      if (i === state.query) r.className = "current";
      for (const c of cols) {
        const x = c.get(i);
        if (c.text) r.append(el("td", { text: x }));
        else r.append(numCell(x, c.key === "diff" ? (x > 0 ? "win" : x < 0 ? "loss" : "") : ""));
      }
      r.addEventListener("click", () => showQuery(i));
      frag.append(r);
    }
    body.textContent = "";
    body.append(frag);
    const pages = Math.max(1, Math.ceil(state.order.length / PAGE));
    document.getElementById("page").textContent = ` page ${state.page + 1} of ${pages} `;
    document.getElementById("count").textContent =
      `${state.order.length} of ${nq} queries · metric ${D.metrics[state.metric]} · ` +
      `A = ${D.runs[state.a]}, B = ${D.runs[state.b]}`;
    document.getElementById("prev").disabled = state.page === 0;
    document.getElementById("next").disabled = state.page + 1 >= pages;
  }

  function refreshTable() {
    sortRows();
    renderTable();
  }

  // -- one query: the rankings side by side ---------------------------------
  function showQuery(i) {
    state.query = i;
    const [nrel, perRun, groups] = D.q[i];
    document.getElementById("detail-query").textContent =
      `${D.queries[i]} — ${nrel} relevant (label ≥ ${D.level})`;
    const box = document.getElementById("detail");
    box.textContent = "";
    box.dataset.query = D.queries[i];
    const hasGroups = D.qrels !== "plain";
    perRun.forEach(([flat, first, numRet, formulas, missed], r) => {
      const col = el("div", { cls: "ranking", "data-run": D.runs[r] });
      col.append(el("h3", { text: D.runs[r] + (r === state.a ? " (A)" : r === state.b ? " (B)" : "") }));
      const ul = el("ul");
      D.metrics.forEach((name, m) => {
        const li = el("li", { "data-metric": name });
        li.dataset.value = String(D.scores[r][m][i]);
        li.append(el("code", { text: formulas[m] }));
        ul.append(li);
      });
      col.append(ul);
      col.append(el("p", {
        cls: "first",
        text: (first === null ? "no relevant document retrieved" : `first relevant at rank ${first}`) +
          ` · ${numRet} retrieved`,
      }));
      const head = ["rank", "doc", "label", "gain", "score"].concat(hasGroups ? [D.qrels === "grouped" ? "group" : "subtopics"] : []);
      const t = el("table", {}, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { text: h, cls: h === "doc" ? "doc" : "" })))));
      const body = el("tbody");
      const n = Math.min(state.depth, flat.length / 3);
      for (let k = 0; k < n; k++) {
        const d = flat[3 * k], label = flat[3 * k + 1], score = flat[3 * k + 2];
        const rel = label !== null && label >= 0 && label >= D.level;
        const tr = el("tr", { "data-doc": D.docs[d], cls: label === null ? "unj" : rel ? "rel" : "" });
        tr.append(
          el("td", { text: String(k + 1) }),
          el("td", { cls: "doc", text: D.docs[d], title: D.docs[d] }),
          el("td", { text: label === null ? "unjudged" : fmt(label, 2) }),
          el("td", { text: fmt(label !== null && label > 0 ? label : 0, 2) }),
          el("td", { text: score === null ? "–" : String(+score.toPrecision(6)) }),
        );
        if (hasGroups) tr.append(el("td", { text: groups[d] || "" }));
        body.append(tr);
      }
      t.append(body);
      col.append(t);
      const miss = missed.map((d) => D.docs[d] + (groups[d] ? ` (${groups[d]})` : ""));
      col.append(el("p", { cls: "missed", text: `relevant not retrieved (${miss.length}): ${miss.join(", ") || "none"}` }));
      box.append(col);
    });
    for (const tr of document.querySelectorAll("#queries tbody tr")) {
      tr.classList.toggle("current", tr.dataset.q === D.queries[i]);
    }
  }

  // -- wiring ---------------------------------------------------------------
  function init() {
    renderSettings();
    renderSummary();
    renderTieBounds();
    fillSelect("run-a", D.runs, state.a, (v) => { state.a = v; renderCharts(); refreshTable(); redrawQuery(); });
    fillSelect("run-b", D.runs, state.b, (v) => { state.b = v; renderCharts(); refreshTable(); redrawQuery(); });
    fillSelect("metric", D.metrics, state.metric, (v) => { state.metric = v; refreshTable(); });
    const depths = [5, 10, 20, 50, 100, 200, 500, 1000].filter((k) => k < D.depth).concat([D.depth]);
    const depthSel = document.getElementById("depth");
    depths.forEach((k) => depthSel.append(el("option", { value: String(k), text: String(k) })));
    depthSel.value = String(depths.includes(state.depth) ? state.depth : D.depth);
    state.depth = Number(depthSel.value);
    depthSel.addEventListener("change", () => { state.depth = Number(depthSel.value); redrawQuery(); });
    let timer = 0;
    document.getElementById("filter").addEventListener("input", (ev) => {
      clearTimeout(timer);
      timer = setTimeout(() => { state.filter = ev.target.value; state.page = 0; refreshTable(); }, 60);
    });
    document.getElementById("prev").addEventListener("click", () => { state.page--; renderTable(); });
    document.getElementById("next").addEventListener("click", () => { state.page++; renderTable(); });
    renderCharts();
    refreshTable();
    document.documentElement.dataset.ready = "1";
    window.ranklensReady = performance.now();
  }

  function redrawQuery() {
    if (state.query >= 0) showQuery(state.query);
  }

  init();
})();
