// The streamsql dashboard: polls the JSON endpoints every second and renders
// the relations, each view's dataflow with its operators' rates, the
// checkpoint history and the running queries. No dependencies.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
let previous = {}; // dataflow id -> {time, ops: {id: rows_out}}

function el(tag, attrs, text) {
  const e = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

async function get(path) {
  const r = await fetch(path, { cache: "no-store" });
  if (!r.ok) throw new Error(path + ": " + r.status);
  return r.json();
}

function renderRelations(rels) {
  const lists = { "table": "tables", "source": "sources", "materialized view": "views", "sink": "sinks" };
  for (const id of Object.values(lists)) document.getElementById(id).replaceChildren();
  for (const r of rels) {
    const li = el("li", { "data-name": r.name }, (r.schema === "public" ? "" : r.schema + ".") + r.name);
    if (r.status && r.status !== "running") {
      li.classList.add("failed");
      li.title = r.status;
    }
    document.getElementById(lists[r.kind]).append(li);
  }
}

function fmtRate(r) {
  if (r >= 1e6) return (r / 1e6).toFixed(1) + "M rows/s";
  if (r >= 1e3) return (r / 1e3).toFixed(1) + "k rows/s";
  return r.toFixed(0) + " rows/s";
}

// renderDataflow draws a view's operator tree: one box per plan line,
// indented by depth, joined to its parent, with rows, rate and time.
function renderDataflow(df) {
  const box = el("div", { class: "dataflow", id: "dataflow-" + df.id });
  box.append(el("h3", {}, df.kind + " " + df.name + (df.failed ? " (failed: " + df.failed + ")" : "")));
  if (df.backfill) {
    const p = el("div", { class: "backfill-line" });
    const total = df.backfill.total;
    const frac = total > 0 ? Math.min(1, df.backfill.rows / total) : 0;
    const bar = el("div", { class: "backfill" });
    bar.append(el("div", { style: "width:" + (frac * 100).toFixed(1) + "%" }));
    p.append("backfill ", bar, " " + df.backfill.rows + " of " + (total >= 0 ? total : "?") + " rows");
    box.append(p);
  }
  const prev = previous[df.id];
  const ops = {};
  const rowH = 40, width = 1100;
  const svg = el("svg:svg", { width: width, height: df.operators.length * rowH + 4, class: "graph" });
  const parents = [];
  df.operators.forEach((op, i) => {
    const x = 4 + op.depth * 28, y = 2 + i * rowH;
    parents[op.depth] = { x, y };
    if (op.depth > 0 && parents[op.depth - 1]) {
      const p = parents[op.depth - 1];
      svg.append(el("svg:path", { d: `M${p.x + 10} ${p.y + 30} V${y + 14} H${x}`, fill: "none", stroke: "#9aa5b1" }));
    }
    svg.append(el("svg:rect", { x, y, width: width - x - 4, height: 30, rx: 3, fill: "#eef4fb", stroke: "#9fb3c8" }));
    svg.append(el("svg:text", { x: x + 6, y: y + 13, "font-weight": "bold" }, op.op));
    const detail = op.detail.length > 120 ? op.detail.slice(0, 117) + "…" : op.detail;
    svg.append(el("svg:text", { x: x + 6, y: y + 26 }, detail));
    if (op.id >= 0) {
      ops[op.id] = op.rows_out;
      let rate = 0;
      if (prev && prev.ops[op.id] !== undefined && df.time > prev.time) {
        rate = (op.rows_out - prev.ops[op.id]) / (df.time - prev.time);
      }
      const stats = `${op.rows_out} rows out · ${fmtRate(rate)} · ${(op.seconds * 1000).toFixed(1)} ms`;
      svg.append(el("svg:text", { x: width - 12, y: y + 13, "text-anchor": "end", class: "rate" }, stats));
    }
  });
  previous[df.id] = { time: df.time, ops };
  box.append(svg);
  return box;
}

function renderCheckpoints(cps) {
  const svg = document.getElementById("checkpoints");
  svg.replaceChildren();
  const w = +svg.getAttribute("width"), h = +svg.getAttribute("height");
  const left = 50, bottom = h - 20;
  const maxMs = Math.max(1, ...cps.map(c => c.duration_ms));
  svg.append(el("svg:text", { x: 4, y: 12 }, maxMs.toFixed(1) + " ms"));
  svg.append(el("svg:text", { x: 4, y: bottom }, "0"));
  svg.append(el("svg:line", { x1: left, y1: bottom, x2: w, y2: bottom, stroke: "#9aa5b1" }));
  const bw = (w - left) / Math.max(cps.length, 1);
  cps.forEach((c, i) => {
    const bh = Math.max(1, (c.duration_ms / maxMs) * (bottom - 8));
    const color = c.status === "completed" ? "#3a7bd5" : "#d97706";
    const r = el("svg:rect", { x: left + i * bw, y: bottom - bh, width: Math.max(1, bw - 1), height: bh, fill: color });
    r.append(el("svg:title", {}, `epoch ${c.epoch}: ${c.duration_ms.toFixed(2)} ms (commit ${c.commit_ms.toFixed(2)} ms, ${c.bytes} bytes) ${c.status}`));
    svg.append(r);
  });
  if (cps.length) {
    const last = cps[cps.length - 1];
    svg.append(el("svg:text", { x: left, y: h - 4 }, `epochs ${cps[0].epoch}–${last.epoch}; last ${last.duration_ms.toFixed(2)} ms`));
  }
}

function renderQueries(qs) {
  const body = document.querySelector("#queries tbody");
  body.replaceChildren();
  const now = Date.now();
  for (const q of qs) {
    const tr = el("tr");
    const secs = ((now - Date.parse(q.started)) / 1000).toFixed(1) + " s";
    for (const v of [q.id, q.user, q.database, secs]) tr.append(el("td", {}, String(v)));
    tr.append(el("td", { class: "q" }, q.query));
    body.append(tr);
  }
}

async function refresh() {
  try {
    const [rels, dfs, cps, qs] = await Promise.all([
      get("api/relations"), get("api/dataflows"), get("api/checkpoints?limit=120"), get("api/queries")]);
    renderRelations(rels);
    document.getElementById("dataflows").replaceChildren(...dfs.map(renderDataflow));
    renderCheckpoints(cps);
    renderQueries(qs);
    document.getElementById("status").textContent = "updated " + new Date().toLocaleTimeString();
    document.body.dataset.loaded = "true";
  } catch (err) {
    document.getElementById("status").textContent = "error: " + err.message;
  }
}

refresh();
setInterval(refresh, 1000);
