// core/server/web/app.js - the Playground: pick a template and one or
// several providers, edit code, run it with POST /v1/run streamed as
// server-sent events (one stream per provider, side by side, differences
// in status, exit code and output marked); the Sandboxes view (with a
// sandbox's files), the Evaluate view (an eval job followed live) and
// the Status view.  report.js holds what the Evaluate view hands out
// (files) and its side-by-side report.
//
// Everything a sandbox or the server says is put in the page as text
// (textContent, never markup), and the page loads nothing from anywhere
// but this server (its Content-Security-Policy says so too).

import { saveBlob, jsonLines, csvOf, showCompare } from "./report.js";

const $ = (id) => document.getElementById(id);
const TOKEN_KEY = "polysandbox.token";

// What the editor starts with for a template, when we have a sample.
const SAMPLES = {
  python: 'import sys\n\nprint("hello from python")\nprint("and from stderr", file=sys.stderr)\n',
  sh: 'echo "hello from sh"\necho "and from stderr" >&2\n',
  bash: 'echo "hello from bash"\necho "and from stderr" >&2\n',
  javascript: 'console.log("hello from javascript");\nconsole.error("and from stderr");\n',
  node: 'console.log("hello from node");\nconsole.error("and from stderr");\n',
};

let running = null;          // the AbortController of the run in flight

function notice(text) {
  const n = $("notice");
  n.textContent = text || "";
  n.hidden = !text;
}

// fetch with the token, if one was given; a 401 asks for one.
async function api(path, init = {}) {
  const headers = new Headers(init.headers || {});
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.set("Authorization", "Bearer " + token);
  const resp = await fetch(path, { ...init, headers });
  if (resp.status === 401 && $("token-box").hidden) {
    $("token-box").hidden = false;
    $("token").focus();   // once: the live views poll, and must not steal the focus
  }
  return resp;
}

// The server's own words for a failed request.
async function errorText(resp) {
  try {
    const j = await resp.json();
    if (j && j.error) return `${j.error.message} (${j.error.code}, HTTP ${resp.status})`;
  } catch (e) { /* not JSON: fall through */ }
  return `HTTP ${resp.status} ${resp.statusText}`;
}

async function getList(path, key) {
  const resp = await api(path);
  if (!resp.ok) throw new Error(`GET ${path}: ${await errorText(resp)}`);
  const j = await resp.json();
  return { items: j[key] || [], def: j.default };
}

function fillSelect(select, items, def) {
  const keep = select.value;
  select.replaceChildren();
  for (const it of items) {
    const o = document.createElement("option");
    o.value = it.name;
    o.textContent = it.name;
    select.append(o);
  }
  const want = [keep, def].find((v) => v && items.some((it) => it.name === v));
  if (want) select.value = want;
}

const checkedProviders = (box = $("providers")) =>
  [...box.querySelectorAll("input:checked")].map((c) => c.value);

// A check box per provider in @box; the ones not ready are shown, disabled.
function fillProviders(box, items, def) {
  const keep = new Set(checkedProviders(box));
  box.querySelectorAll("label").forEach((l) => l.remove());
  for (const it of items) {
    const label = document.createElement("label");
    const cb = document.createElement("input");
    cb.type = "checkbox";
    cb.value = it.name;
    cb.disabled = it.state !== "ready";
    cb.checked = !cb.disabled && (keep.size ? keep.has(it.name) : it.name === def);
    label.append(cb, it.state === "ready" ? it.name : `${it.name} (${it.state})`);
    box.append(label);
  }
}

async function loadLists() {
  try {
    const [t, p] = await Promise.all([getList("/v1/templates", "templates"),
                                      getList("/v1/providers", "providers")]);
    fillSelect($("template"), t.items, t.def || "python");
    fillProviders($("providers"), p.items, p.def);
    fillSelect($("sb-template"), t.items, t.def || "python");
    fillSelect($("sb-provider"), p.items.filter((it) => it.state === "ready"), p.def);
    fillProviders($("ev-providers"), p.items, p.def);
    notice("");
    sampleFor($("template").value);
  } catch (e) {
    notice(e.message);
  }
}

// A sample in the editor when it is empty or still holds another sample.
function sampleFor(tpl) {
  const now = editor.get();
  if (now === "" || Object.values(SAMPLES).includes(now)) editor.set(SAMPLES[tpl] || "");
  editor.setTemplate(tpl);
}

// ---- the editor --------------------------------------------------------------
// CodeMirror 6 from editor.js (bundled by make from npm, see
// editor/editor.mjs) when this build has it; until it has loaded, and in a
// build without it (editor.js is then editor-none.js), the textarea below.

let editor = {
  get: () => $("code").value,
  set: (text) => { $("code").value = text; },
  setTemplate: () => {},
};

// Loaded after the page is shown and usable: the textarea's text (typed
// meanwhile, or the sample) moves into the editor.  body[data-editor]
// says which one is in use.
async function loadEditor() {
  let kind = "textarea";
  try {
    const m = await import("./editor.js");
    if (m.createEditor) {
      editor = m.createEditor($("code"), { template: $("template").value, onRun: run });
      kind = "codemirror";
    }
  } catch (e) {
    notice(`the code editor did not load (${e.message}): a plain text area is used`);
  }
  document.body.dataset.editor = kind;
}

// ---- the textarea: Tab indents, Shift+Tab dedents, Esc lets the next Tab
// move the focus (so the keyboard alone can leave it) -------------------------

const INDENT = "    ";
let escaped = false;

// Replace @from..@to with @text as typing would (execCommand keeps the
// browser's undo history; setRangeText, the fallback, does not).
function replaceText(ta, from, to, text, select) {
  ta.setSelectionRange(from, to);
  if (!document.execCommand("insertText", false, text)) {
    ta.setRangeText(text, from, to, "end");
    ta.dispatchEvent(new Event("input"));
  }
  if (select) ta.setSelectionRange(from, from + text.length);
}

function editorKey(ev) {
  const ta = ev.target;
  if (ev.key === "Escape") { escaped = true; return; }
  if (ev.key !== "Tab" || escaped || ev.ctrlKey || ev.altKey || ev.metaKey) {
    escaped = false;
    return;
  }
  ev.preventDefault();
  const { selectionStart: s, selectionEnd: e, value: v } = ta;
  const lineStart = v.lastIndexOf("\n", s - 1) + 1;
  if (!ev.shiftKey && s === e) {
    replaceText(ta, s, e, INDENT, false);
  } else {
    // indent or dedent every line the selection (or the caret) touches
    const out = v.slice(lineStart, e).split("\n")
      .map((l) => (ev.shiftKey ? l.replace(/^( {1,4}|\t)/, "") : INDENT + l)).join("\n");
    replaceText(ta, lineStart, e, out, s !== e);
  }
}

// ---- a run -------------------------------------------------------------------

function b64bytes(text) {
  const bin = atob(text);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

// One run's card: its provider, status, figures and output.
function newCard(provider) {
  const el = (tag, cls) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    return e;
  };
  const c = { card: el("article", "run"), status: el("span", "status running"),
              exit: el("span", "exit"), figures: el("dl", "figures"), diff: el("p", "diff"),
              output: el("pre", "output") };
  const head = el("header");
  const name = el("h2");
  name.textContent = provider || "default provider";
  c.status.textContent = "running";
  c.output.tabIndex = 0;
  c.output.setAttribute("aria-live", "polite");
  head.append(name, c.status, c.exit);
  c.card.dataset.provider = provider || "";
  c.card.append(head, c.figures, c.diff, c.output);
  return c;
}

// Output as text nodes: UTF-8 as it is, other bytes as \xNN marked apart.
function appendOutput(c, stream, data, encoding) {
  const out = c.output;
  const stick = out.scrollTop + out.clientHeight >= out.scrollHeight - 4;
  const span = document.createElement("span");
  span.className = stream;
  if (encoding === "base64") {
    const bytes = b64bytes(data);
    let plain = "";
    const flush = () => { if (plain) { span.append(plain); plain = ""; } };
    for (const b of bytes) {
      if (b === 10 || b === 9 || (b >= 32 && b < 127)) {
        plain += String.fromCharCode(b);
      } else {
        flush();
        const x = document.createElement("span");
        x.className = "binary";
        x.textContent = "\\x" + b.toString(16).padStart(2, "0");
        span.append(x);
      }
    }
    flush();
  } else {
    span.textContent = data;
  }
  out.append(span);
  if (stick) out.scrollTop = out.scrollHeight;
}

function setStatus(c, text, kind) {
  c.status.textContent = text;
  c.status.className = "status " + kind;
}

const ms = (ns) => (ns == null ? "–" : (ns / 1e6).toFixed(ns < 1e7 ? 2 : 0) + " ms");
function bytes(n) {
  if (n == null) return "–";
  const u = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + u[i];
}

function showFigures(c, pairs) {
  c.figures.replaceChildren();
  for (const [k, v] of pairs) {
    const d = document.createElement("div");
    const dt = document.createElement("dt");
    const dd = document.createElement("dd");
    dt.textContent = k;
    dd.textContent = v;
    dd.dataset.figure = k;
    d.append(dt, dd);
    c.figures.append(d);
  }
}

function note(c, text, cls = "note") {
  const p = document.createElement("span");
  p.className = cls;
  p.textContent = (c.output.textContent ? "\n" : "") + text + "\n";
  c.output.append(p);
}

function showResult(c, r, streamed) {
  setStatus(c, r.status, r.status === "ok" ? "ok" : "bad");
  c.exit.textContent = r.signal != null ? `signal ${r.signal}`
    : r.exit_code != null ? `exit code ${r.exit_code}` : "";
  const t = r.timings_ns || {};
  showFigures(c, [["create", ms(t.create)], ["start", ms(t.start)], ["exec", ms(t.exec)],
                  ["total", ms(t.total)], ["cpu", ms(r.cpu_ns)],
                  ["memory", bytes(r.peak_memory_bytes)]]);
  // a result whose output was not streamed (nothing arrived) shows it whole
  if (!streamed) {
    if (r.stdout) appendOutput(c, "stdout", r.stdout, r.stdout_encoding);
    if (r.stderr) appendOutput(c, "stderr", r.stderr, r.stderr_encoding);
  }
  for (const s of ["stdout", "stderr"]) {
    if (r[s + "_truncated"]) note(c, `(${s} was cut at the output limit)`);
  }
  if (r.error) note(c, r.error);
  showArtifacts(c, r);
}

// The files a template's artifacts directory held: each with a Save
// button (a Blob: the API wants the token in a header, so no plain
// link), an image also shown inline; the ones left out with the reason.
const INLINE = new Set(["image/png", "image/jpeg", "image/gif"]);
function textSpan(cls, text) {
  const s = document.createElement("span");
  s.className = cls;
  s.textContent = text;
  return s;
}
function showArtifacts(c, r) {
  const kept = r.artifacts || [], out = r.artifacts_left_out || [];
  if (!kept.length && !out.length) return;
  const box = document.createElement("section");
  box.className = "artifacts";
  const h = document.createElement("h3");
  h.textContent = "Artifacts";
  const list = document.createElement("ul");
  for (const a of kept) {
    const li = document.createElement("li");
    li.dataset.path = a.path;
    const blob = new Blob([b64bytes(a.base64 || "")], { type: a.mime || "application/octet-stream" });
    const save = document.createElement("button");
    save.type = "button";
    save.className = "save";
    save.textContent = "Save";
    save.addEventListener("click", () => saveBlob(a.path.split("/").pop() || "artifact", blob));
    li.append(textSpan("path", a.path), textSpan("meta", `${bytes(a.size)}, ${a.mime}`), save);
    if (INLINE.has(a.mime)) {
      const img = document.createElement("img");
      img.alt = a.path;
      // once decoded the image stays shown: the URL can go
      img.addEventListener("load", () => URL.revokeObjectURL(img.src), { once: true });
      img.src = URL.createObjectURL(blob);
      li.append(img);
    }
    list.append(li);
  }
  for (const o of out) {
    const li = document.createElement("li");
    li.className = "left-out";
    li.dataset.path = o.path;
    li.append(textSpan("path", o.path), textSpan("reason", `left out (${bytes(o.size)}): ${o.reason}`));
    list.append(li);
  }
  box.append(h, list);
  c.card.append(box);
}

// Read "event:/data:" blocks off the stream; call on(event, data).
async function readEvents(resp, on) {
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value.replace(/\r\n/g, "\n");
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let event = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).replace(/^ /, "");
      }
      if (data) on(event, JSON.parse(data));
    }
  }
}

// One run (POST @path, /v1/run or a sandbox's exec) streamed into its
// card: the result object, or null.
async function runOne(c, path, body, signal) {
  let streamed = false, result = null, failed = false;
  try {
    const resp = await api(path, {
      method: "POST",
      headers: { "Accept": "text/event-stream", "Content-Type": "application/json" },
      body: JSON.stringify(body),
      signal,
    });
    if (!resp.ok) {
      const why = await errorText(resp);
      setStatus(c, "error", "bad");
      note(c, why, "error");
      if (resp.status === 400) showServerFieldError(why);
      return null;
    }
    await readEvents(resp, (event, data) => {
      if (event === "stdout" || event === "stderr") {
        streamed = true;
        appendOutput(c, event, data.data, data.encoding);
      } else if (event === "result") {
        result = data;
        showResult(c, data, streamed);
      } else if (event === "error") {
        failed = true;
        setStatus(c, "error", "bad");
        const e = data.error || {};
        note(c, `${e.message} (${e.code}${e.provider ? ", " + e.provider : ""})`, "error");
      }
    });
    if (!result && !failed) {
      setStatus(c, "error", "bad");
      note(c, "the stream ended before the run's result", "error");
    }
  } catch (e) {
    setStatus(c, e.name === "AbortError" ? "stopped" : "error", "bad");
    if (e.name !== "AbortError") note(c, e.message, "error");
  }
  return result;
}

// Several providers: mark what differs from the first one's result.
const ASPECTS = [["status", (r) => r.status], ["exit", (r) => `${r.exit_code}/${r.signal}`],
                 ["stdout", (r) => r.stdout], ["stderr", (r) => r.stderr]];
function compare(cards, results, names) {
  const ref = results.findIndex((r) => r);
  if (ref < 0) return;
  const differ = new Set();
  results.forEach((r, i) => {
    if (i === ref || !r) return;
    const what = ASPECTS.filter(([, f]) => f(r) !== f(results[ref])).map(([k]) => k);
    what.forEach((k) => differ.add(k));
    if (what.length) {
      cards[i].card.classList.add("differs");
      cards[i].diff.textContent = `differs from ${names[ref]}: ${what.join(", ")}`;
    }
  });
  const n = results.filter((r) => r).length;
  $("compare").textContent = differ.size
    ? `The providers differ in ${[...differ].join(", ")}.`
    : `All ${n} providers agree (status, exit code, stdout, stderr).`;
  $("compare").className = differ.size ? "differs" : "agree";
}

// ---- the run's settings: timeout, limits and env, each field's error
// (the page's own or the server's "field 'limits.memory': ...") shown
// beside the field the error names ---------------------------------------------

const FIELDS = () => [...document.querySelectorAll("[data-field]")];

// The limits offered: [key of "limits", label, example].
const LIMITS = [["memory", "memory", "512M"], ["cpu", "cpu time", "5s"], ["pids", "processes", "64"],
                ["nofile", "open files", "256"], ["stdout", "stdout", "1M"]];

function limitFields() {
  const box = $("limit-fields");
  for (const [key, title, example] of LIMITS) {
    const label = document.createElement("label");
    const input = document.createElement("input");
    const error = document.createElement("span");
    Object.assign(input, { id: "lim-" + key, type: "text", size: 6, placeholder: example,
                           spellcheck: false });
    input.dataset.field = "limits." + key;
    input.setAttribute("aria-describedby", `lim-${key}-error`);
    Object.assign(error, { id: `lim-${key}-error`, className: "field-error" });
    error.setAttribute("role", "alert");
    label.append(title + " ", input);
    box.append(label, error);
  }
}

function fieldError(name, text) {
  const input = FIELDS().find((f) => f.dataset.field === name);
  if (!input) return false;
  $(input.id + "-error").textContent = text;
  input.classList.add("invalid");
  if (input.closest("details")) input.closest("details").open = true;
  return true;
}

function clearFieldErrors() {
  for (const f of FIELDS()) {
    f.classList.remove("invalid");
    $(f.id + "-error").textContent = "";
  }
}

// The settings as the run's body has them, or null (errors shown).
function settings(body) {
  const t = $("timeout").value.trim();
  if (t) body.timeout = t;
  const limits = {};
  for (const f of FIELDS()) {
    const v = f.value.trim();
    if (v && f.dataset.field.startsWith("limits.")) limits[f.dataset.field.slice(7)] = v;
  }
  if (Object.keys(limits).length) body.limits = limits;
  const env = {};
  const lines = $("env").value.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, "");
    if (!line.trim()) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) {
      fieldError("env", `line ${i + 1}: "${line}" is not KEY=VALUE`);
      return null;
    }
    env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  if (Object.keys(env).length) body.env = env;
  return body;
}

// A 400 naming one of the fields is shown beside it too.
function showServerFieldError(text) {
  const m = /field '([^']+)':? (.*) \([a-z_]+, HTTP 400\)$/s.exec(text);
  return m ? fieldError(m[1], m[2]) : false;
}

async function run() {
  if (running) return;
  clearFieldErrors();
  const body = settings({ language: $("template").value, code: editor.get() });
  if (!body) return;
  if ($("stdin").value) body.stdin = $("stdin").value;
  const names = checkedProviders();
  const targets = names.length ? names : [null];   // none checked: the server's default

  notice("");
  $("compare").textContent = "";
  $("compare").className = "";
  const cards = targets.map(newCard);
  $("results").replaceChildren(...cards.map((c) => c.card));
  $("results").classList.toggle("several", cards.length > 1);
  running = new AbortController();
  $("run").disabled = true;
  $("stop").disabled = false;
  try {
    const results = await Promise.all(targets.map((p, i) =>
      runOne(cards[i], "/v1/run", p ? { ...body, provider: p } : body, running.signal)));
    if (targets.length > 1) compare(cards, results, targets);
  } finally {
    running = null;
    $("run").disabled = false;
    $("stop").disabled = true;
  }
}

// ---- the Status view: the server's figures, providers and pools, polled
// while the view is shown ----------------------------------------------------

const REFRESH_MS = 2000;      // the live views poll this often while shown

function table(el, items, columns, empty) {
  el.replaceChildren();
  if (!items.length) {
    const tr = document.createElement("tr");
    const td = document.createElement("td");
    td.className = "note";
    td.textContent = empty;
    tr.append(td);
    el.append(tr);
    return;
  }
  const head = document.createElement("tr");
  for (const [key, title] of columns) {
    const th = document.createElement("th");
    th.textContent = title || key;
    head.append(th);
  }
  el.append(head);
  for (const it of items) {
    const tr = document.createElement("tr");
    tr.dataset.name = it.name;
    for (const [key] of columns) {
      const td = document.createElement("td");
      const v = it[key];
      td.textContent = v == null ? "–" : String(v);
      td.dataset.key = key;
      if (key === "state" || key === "breaker") td.className = `${key}-${v}`;
      tr.append(td);
    }
    el.append(tr);
  }
}

async function refreshStatus() {
  try {
    const [st, pr, po] = await Promise.all(["/v1/status", "/v1/providers", "/v1/pools"].map(
      async (path) => {
        const resp = await api(path);
        if (!resp.ok) throw new Error(`GET ${path}: ${await errorText(resp)}`);
        return resp.json();
      }));
    const c = { figures: $("server-figures") };
    showFigures(c, [["version", st.version], ["uptime", `${Math.round(st.uptime_seconds)} s`],
                    ["workers busy", `${st.workers.busy} / ${st.workers.total}`],
                    ["queue", `${st.queue.depth} / ${st.queue.capacity}`],
                    ["in flight", st.in_flight], ["admitted", st.admitted],
                    ["completed", st.completed], ["rejected (queue full)", st.rejects.queue_full],
                    ["rejected (quota)", st.rejects.quota],
                    ["stopping", st.stopping ? "yes" : "no"]]);
    table($("provider-table"), pr.providers,
          [["name"], ["state"], ["priority"], ["version"], ["breaker"],
           ["breaker_failures", "failures"], ["reason"]], "no providers");
    const pools = po.pools || [];
    const keys = [...new Set(pools.flatMap((p) => Object.keys(p)))]
      .filter((k) => pools.every((p) => p[k] === null || typeof p[k] !== "object"));
    table($("pool-table"), pools, keys.map((k) => [k]), "no pools configured");
    $("status-updated").textContent = "updated " + new Date().toLocaleTimeString();
    notice("");
  } catch (e) {
    notice(e.message);
  }
}

// ---- the Sandboxes view: the sandboxes of a provider, made, used in
// order and destroyed from here ----------------------------------------------

let openBox = null;          // {id, provider} of the sandbox opened

const sbPath = (b, tail = "") =>
  `/v1/sandboxes/${encodeURIComponent(b.id)}${tail}?provider=${encodeURIComponent(b.provider)}`;

async function refreshSandboxes() {
  const prov = $("sb-provider").value;
  if (!prov) return;
  try {
    const resp = await api(`/v1/sandboxes?provider=${encodeURIComponent(prov)}`);
    if (!resp.ok) throw new Error(`GET /v1/sandboxes: ${await errorText(resp)}`);
    const list = (await resp.json()).sandboxes || [];
    const now = Date.now() / 1000;
    const el = $("sandbox-table");
    el.replaceChildren();
    const head = document.createElement("tr");
    for (const t of ["id", "provider", "labels", "age", "expires in", ""]) {
      const th = document.createElement("th");
      th.textContent = t;
      head.append(th);
    }
    el.append(head);
    if (!list.length) {
      const tr = document.createElement("tr");
      const td = document.createElement("td");
      td.className = "note";
      td.textContent = `no sandboxes on ${prov}`;
      tr.append(td);
      el.append(tr);
    }
    for (const b of list) {
      const tr = document.createElement("tr");
      tr.dataset.id = b.id;
      const labels = Object.entries(b.labels || {}).map(([k, v]) => `${k}=${v}`).join(", ");
      const age = b.created_at ? `${Math.max(0, Math.round(now - b.created_at))} s` : "–";
      // the TTL the provider keeps as a label (polysandbox.expires, unix seconds)
      const exp = Number((b.labels || {})["polysandbox.expires"]);
      const ttl = exp ? `${Math.max(0, Math.round(exp - now))} s` : "–";
      for (const v of [b.id, b.provider, labels || "–", age, ttl]) {
        const td = document.createElement("td");
        td.textContent = v;
        tr.append(td);
      }
      const td = document.createElement("td");
      const open = document.createElement("button");
      open.type = "button";
      open.textContent = "Open";
      open.className = "open";
      open.addEventListener("click", () => openSandbox(b));
      const del = document.createElement("button");
      del.type = "button";
      del.textContent = "Destroy";
      del.className = "destroy";
      del.addEventListener("click", () => destroySandbox(b));
      td.append(open, del);
      tr.append(td);
      el.append(tr);
    }
    notice("");
  } catch (e) {
    notice(e.message);
  }
}

async function createSandbox() {
  const body = { provider: $("sb-provider").value, template: $("sb-template").value };
  const labels = {};
  for (const kv of $("sb-labels").value.split(",").map((x) => x.trim()).filter(Boolean)) {
    const eq = kv.indexOf("=");
    if (eq <= 0) {
      notice(`Labels: "${kv}" is not KEY=VALUE`);
      return;
    }
    labels[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  if (Object.keys(labels).length) body.labels = labels;
  if ($("sb-ttl").value.trim()) body.ttl = $("sb-ttl").value.trim();
  $("sb-create").disabled = true;
  try {
    const resp = await api("/v1/sandboxes", { method: "POST", body: JSON.stringify(body),
                                              headers: { "Content-Type": "application/json" } });
    if (!resp.ok) throw new Error(`Create: ${await errorText(resp)}`);
    const b = await resp.json();
    await refreshSandboxes();
    openSandbox(b);
  } catch (e) {
    notice(e.message);
  } finally {
    $("sb-create").disabled = false;
  }
}

async function destroySandbox(b) {
  try {
    const resp = await api(sbPath(b), { method: "DELETE" });
    if (!resp.ok) throw new Error(`Destroy ${b.id}: ${await errorText(resp)}`);
    if (openBox && openBox.id === b.id) {
      openBox = null;
      $("sb-open").hidden = true;
    }
  } catch (e) {
    notice(e.message);
  }
  refreshSandboxes();
}

function openSandbox(b) {
  if (!openBox || openBox.id !== b.id) {
    $("sb-log").replaceChildren();
    fileDir = [];
  }
  openBox = { id: b.id, provider: b.provider };
  $("sb-open-h").textContent = `${b.id} on ${b.provider}`;
  $("sb-open").hidden = false;
  $("sb-files-said").textContent = "";
  $("sb-command").focus();
  listFiles();
}

// ---- the files of the sandbox opened: GET /v1/sandboxes/ID/files?path=DIR
// lists a directory; directories are entered, files downloaded, uploads
// land in the directory shown.  A name is the sandbox's bytes: shown as
// text, control characters as \n, \t or \xNN, never as markup. ----------------

// The directory shown: its parts, each {name, seg} (seg: the part encoded
// for a URL, byte for byte when the name is not UTF-8).
let fileDir = [];
let listing = 0;             // the number of the latest listing asked for

function shownName(name) {
  return name.replace(/[\x00-\x1f\x7f]/g, (c) =>
    c === "\n" ? "\\n" : c === "\t" ? "\\t" : "\\x" + c.charCodeAt(0).toString(16).padStart(2, "0"));
}

// A name as one encoded URL segment: its exact bytes when given.
function nameSegment(e) {
  if (!e.name_base64) return encodeURIComponent(e.name);
  return [...b64bytes(e.name_base64)].map((b) =>
    /[A-Za-z0-9._~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b)
      : "%" + b.toString(16).toUpperCase().padStart(2, "0")).join("");
}

const dirQuery = (parts) => parts.map((p) => p.seg).join("/");

function showCrumbs() {
  const nav = $("sb-crumbs");
  nav.replaceChildren();
  const crumb = (text, depth) => {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.dataset.depth = depth;
    if (depth === fileDir.length) b.setAttribute("aria-current", "location");
    b.addEventListener("click", () => { fileDir = fileDir.slice(0, depth); listFiles(); });
    return b;
  };
  nav.append(crumb("work directory", 0));
  fileDir.forEach((p, i) => nav.append("/", crumb(shownName(p.name), i + 1)));
}

async function listFiles() {
  if (!openBox) return;
  const box = openBox;
  const n = ++listing;
  showCrumbs();
  try {
    // each part is encoded already (byte for byte); the slashes are kept
    const q = fileDir.length ? `&path=${dirQuery(fileDir)}` : "";
    const resp = await api(sbPath(box, "/files") + q);
    if (!resp.ok) throw new Error(`List files: ${await errorText(resp)}`);
    const j = await resp.json();
    if (n !== listing || openBox !== box) return;   // a newer listing was asked for
    // (the notice is left alone: it may hold what a download just said)
    showFiles(j);
  } catch (e) {
    if (n === listing) notice(e.message);
  }
}

function showFiles(j) {
  const el = $("sb-files");
  el.replaceChildren();
  const row = (cells, tag = "td") => {
    const tr = document.createElement("tr");
    for (const c of cells) {
      const td = document.createElement(tag);
      if (c instanceof Node) td.append(c);
      else td.textContent = c;
      tr.append(td);
    }
    el.append(tr);
    return tr;
  };
  row(["name", "type", "size", "modified", ""], "th");
  if (fileDir.length) {
    const up = document.createElement("button");
    up.type = "button";
    up.className = "dir";
    up.textContent = "..";
    up.addEventListener("click", () => { fileDir = fileDir.slice(0, -1); listFiles(); });
    row([up, "directory", "", "", ""]).dataset.up = "1";
  }
  if (!j.entries.length) row(["(empty)"]).firstChild.className = "note";
  for (const e of j.entries) {
    const seg = nameSegment(e);
    let name = shownName(e.name), action = "";
    if (e.type === "directory") {
      name = document.createElement("button");
      name.type = "button";
      name.className = "dir";
      name.textContent = shownName(e.name) + "/";
      name.addEventListener("click", () => { fileDir = [...fileDir, { name: e.name, seg }]; listFiles(); });
    } else if (e.type === "file") {
      action = document.createElement("button");
      action.type = "button";
      action.className = "download";
      action.textContent = "Download";
      action.setAttribute("aria-label", "Download " + shownName(e.name));
      action.addEventListener("click", () =>
        saveFile([...fileDir.map((p) => p.seg), seg].join("/"), e.name));
    }
    const tr = row([name, e.type, e.type === "file" ? bytes(e.size) : "",
                    new Date(e.mtime * 1000).toLocaleString(), action]);
    tr.dataset.name = e.name;
    tr.firstChild.className = "name";
    tr.children[2].className = "num";
  }
  if (j.truncated) row([`only the first ${j.entries.length} entries are shown`]).firstChild.className = "note";
}

// Files of the sandbox opened: PUT and GET /v1/sandboxes/ID/files/PATH
// (PATH relative to its work directory; each segment encoded, the
// slashes kept).
const encodePath = (path) => path.split("/").map(encodeURIComponent).join("/");
const filePath = (b, segs) => sbPath(b, "/files/" + segs);

async function uploadFile() {
  const file = $("sb-file").files[0];
  // relative to the directory shown
  const name = $("sb-upload-path").value.trim() || (file && file.name);
  if (!openBox || !file) {
    notice("Upload: choose a file first");
    return;
  }
  const shown = fileDir.map((p) => shownName(p.name));
  const path = [...shown, name].join("/");
  try {
    const segs = [...fileDir.map((p) => p.seg), encodePath(name)].join("/");
    const resp = await api(filePath(openBox, segs), { method: "PUT", body: file,
      headers: { "Content-Type": "application/octet-stream" } });
    if (!resp.ok) throw new Error(`Upload ${path}: ${await errorText(resp)}`);
    $("sb-files-said").textContent = `uploaded ${path} (${bytes(file.size)})`;
    notice("");
    listFiles();
  } catch (e) {
    notice(e.message);
  }
}

// The token goes in a header, so the file is fetched here and handed to
// the browser as a blob to save.
async function downloadFile() {
  const path = $("sb-download-path").value.trim();
  if (!openBox || !path) {
    notice("Download: name a path in the sandbox first");
    return;
  }
  saveFile(encodePath(path), path);
}

// @segs: the path encoded for the URL; @path: as shown.
async function saveFile(segs, path) {
  try {
    const resp = await api(filePath(openBox, segs));
    if (!resp.ok) throw new Error(`Download ${shownName(path)}: ${await errorText(resp)}`);
    const size = saveBlob(path.split("/").pop(), await resp.blob());
    $("sb-files-said").textContent = `downloaded ${shownName(path)} (${bytes(size)})`;
    notice("");
  } catch (e) {
    notice(e.message);
  }
}

// A command in the sandbox opened, its output streamed into a card of the
// log; commands run one after another, in the order given.
let execChain = Promise.resolve();
function execCommand() {
  const cmd = $("sb-command").value;
  if (!openBox || !cmd.trim()) return;
  $("sb-command").value = "";
  const box = openBox;
  const c = newCard("$ " + cmd);
  $("sb-log").append(c.card);
  // a command may change the files: list them again after it
  execChain = execChain.then(() => runOne(c, sbPath(box, "/exec"), { shell: cmd }, undefined))
    .then(() => { if (openBox === box) listFiles(); });
}

// ---- the Evaluate view: a dataset and samples (JSON Lines, read here)
// scored as a job per provider checked (POST /v1/eval), each followed
// through its events (GET /v1/jobs/ID/events): progress with rate and
// ETA, pass@k as it converges, each sample's record one click away.
// Once the jobs ended: each one's report (GET /v1/jobs/ID) and records
// (JSON Lines, CSV) to download, and with several providers the report
// of POST /v1/compare side by side. ---------------------------------------

let evRun = null;            // {jobs: [{id, provider, progress, done}], ks, t0} followed

async function readJsonLines(input, what) {
  const file = input.files[0];
  if (!file) throw new Error(`${what}: choose a file`);
  const out = [];
  (await file.text()).split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    try {
      out.push(JSON.parse(line));
    } catch (e) {
      throw new Error(`${what} ${file.name}:${i + 1}: not JSON (${e.message})`);
    }
  });
  return out;
}

async function startEval() {
  const made = [];
  let ks;
  try {
    const body = { dataset: await readJsonLines($("ev-dataset"), "Dataset") };
    if ($("ev-canonical").checked) body.canonical = true;
    else body.samples = await readJsonLines($("ev-samples"), "Samples");
    ks = $("ev-k").value.split(",").map((x) => x.trim()).filter(Boolean);
    if (ks.some((k) => !/^[0-9]+$/.test(k))) throw new Error(`k: "${$("ev-k").value}" is not a list of numbers`);
    if (ks.length) body.k = ks.map(Number);
    const names = checkedProviders($("ev-providers"));
    $("ev-start").disabled = true;
    // a job per provider (none checked: the server's default), the same body
    for (const p of names.length ? names : [null]) {
      const resp = await api("/v1/eval", { method: "POST", headers: { "Content-Type": "application/json" },
                                           body: JSON.stringify(p ? { ...body, providers: [p] } : body) });
      if (!resp.ok) throw new Error(`Start${p ? " on " + p : ""}: ${await errorText(resp)}`);
      made.push({ id: (await resp.json()).id, provider: p || "default provider" });
    }
    notice("");
  } catch (e) {
    notice(e.message);
    if (!made.length) {
      $("ev-start").disabled = false;
      return;
    }
  }
  // the jobs made are followed, even when a later one was refused
  followJobs(made, ks && ks.length ? ks.map(Number) : null);
}

// pass@k of the jobs: one job's as pass@K, several as PROVIDER pass@K.
function showPassK(run) {
  const pairs = [];
  for (const j of run.jobs) {
    for (const [k, v] of Object.entries(j.passk || {}))
      pairs.push([run.jobs.length > 1 ? `${j.provider} pass@${k}` : `pass@${k}`,
                  v == null ? "–" : v.toFixed(4)]);
  }
  showFigures({ figures: $("ev-passk") }, pairs);
}

function evRow(rec) {
  const tr = document.createElement("tr");
  tr.className = "item";
  tr.tabIndex = 0;
  tr.dataset.verdict = rec.verdict;
  for (const [v, cls] of [[rec.task_id], [rec.sample], [rec.provider || ""],
                          [rec.verdict, `verdict-${rec.verdict}`], [rec.status], [rec.reason || ""]]) {
    const td = document.createElement("td");
    td.textContent = v;
    if (cls) td.className = cls;
    tr.append(td);
  }
  const show = () => {
    $("ev-record").hidden = false;
    $("ev-record").textContent = JSON.stringify(rec, null, 2);
  };
  tr.addEventListener("click", show);
  tr.addEventListener("keydown", (ev) => { if (ev.key === "Enter") show(); });
  tr.hidden = !!$("ev-filter").value && $("ev-filter").value !== rec.verdict;
  return tr;
}

function filterItems() {
  const want = $("ev-filter").value;
  document.querySelectorAll("#ev-items tr.item").forEach((tr) => {
    tr.hidden = !!want && tr.dataset.verdict !== want;
  });
}

function addVerdict(v) {
  const f = $("ev-filter");
  if ([...f.options].some((o) => o.value === v)) return;
  const o = document.createElement("option");
  o.value = v;
  o.textContent = v;
  f.append(o);
}

// The progress of all the jobs, summed, in the bar and the line under it.
function showProgress(run) {
  const sum = { done: 0, total: 0, passed: 0 };
  for (const j of run.jobs)
    for (const k of Object.keys(sum)) sum[k] += (j.progress || {})[k] || 0;
  $("ev-progress").max = Math.max(1, sum.total);
  $("ev-progress").value = sum.done;
  const ended = run.jobs.filter((j) => j.end);
  if (ended.length < run.jobs.length) {
    const secs = (Date.now() - run.t0) / 1000;
    const rate = secs > 0 ? sum.done / secs : 0;
    const eta = rate > 0 ? Math.round((sum.total - sum.done) / rate) : null;
    $("ev-said").textContent = `${sum.done} / ${sum.total} samples, ${sum.passed} passed, ` +
      `${rate.toFixed(1)}/s` + (eta == null ? "" : `, ETA ${eta} s`) +
      (ended.length ? ` (${ended.length} of ${run.jobs.length} jobs ended)` : "");
    return;
  }
  const states = [...new Set(ended.map((j) => j.end.state))];
  const rate = run.jobs.length === 1 ? run.jobs[0].end.rate : null;
  $("ev-said").textContent = `${states.join(", ")}: ${sum.done} / ${sum.total} samples, ${sum.passed} passed` +
    (rate != null ? `, ${rate.toFixed(1)}/s` : "");
}

async function followJobs(jobs, ks) {
  const run = { jobs: jobs.map((j) => ({ ...j, progress: null, passk: null, end: null, last: 0 })),
                ks, t0: Date.now() };
  evRun = run;
  $("ev-job").hidden = false;
  $("ev-job-h").textContent = (jobs.length > 1 ? "jobs " : "job ") + jobs.map((j) => j.id).join(", ");
  $("ev-job").dataset.jobs = jobs.map((j) => j.id).join(" ");
  $("ev-said").textContent = "starting";
  $("ev-passk").replaceChildren();
  $("ev-record").hidden = true;
  $("ev-downloads").hidden = true;
  $("ev-downloads").replaceChildren();
  $("ev-compare").hidden = true;
  const items = $("ev-items");
  items.replaceChildren();
  const head = document.createElement("tr");
  for (const t of ["task", "sample", "provider", "verdict", "status", "reason"]) {
    const th = document.createElement("th");
    th.textContent = t;
    head.append(th);
  }
  items.append(head);
  await Promise.all(run.jobs.map((job) => followOne(run, job)));
  if (evRun !== run) return;
  $("ev-start").disabled = false;
  if (run.jobs.every((j) => j.end)) jobsEnded(run);
}

// One job's events into the view @run, until its "done" (or an error).
async function followOne(run, job) {
  const id = job.id;
  // pass@k is the job's (GET /v1/jobs/ID): asked at most once a second.
  // An answer landing after "done" is older than the final figures the
  // done event carries, so it is dropped.
  const refresh = async () => {
    const resp = await api(`/v1/jobs/${encodeURIComponent(id)}?limit=0`);
    if (!resp.ok) return;
    const pk = (await resp.json()).pass_at_k;
    if (evRun === run && !job.end) {
      job.passk = pk;
      showPassK(run);
    }
  };
  try {
    const resp = await api(`/v1/jobs/${encodeURIComponent(id)}/events`,
                           { headers: { Accept: "text/event-stream" } });
    if (!resp.ok) throw new Error(`Job ${id}: ${await errorText(resp)}`);
    await readEvents(resp, (event, data) => {
      if (evRun !== run) return;
      if (event === "item" && data.record) {
        addVerdict(data.record.verdict);
        $("ev-items").append(evRow(data.record));
      } else if (event === "progress") {
        job.progress = data;
        showProgress(run);
        if (Date.now() - job.last > 1000) {
          job.last = Date.now();
          refresh();
        }
      } else if (event === "error" && data.error) {
        notice(`Job ${id}: ${data.error.message} (${data.error.code})`);
      } else if (event === "done") {
        job.end = data;
        job.progress = data.progress || {};
        job.passk = data.pass_at_k;
        showProgress(run);
        showPassK(run);
      }
    });
  } catch (e) {
    if (evRun === run) notice(e.message);
  }
}

// Every job ended: its files offered, and the providers compared.
async function jobsEnded(run) {
  const box = $("ev-downloads");
  const button = (text, kind, id, act) => {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.dataset.download = kind;
    if (id) b.dataset.job = id;
    b.addEventListener("click", act);
    return b;
  };
  for (const j of run.jobs) {
    const group = document.createElement("span");
    group.className = "group";
    group.append(run.jobs.length > 1 ? `${j.provider}:` : "Download:",
                 button("report (JSON)", "report", j.id, () => saveReport(j.id)),
                 button("results (JSONL)", "jsonl", j.id, () => saveRecords(j.id, "jsonl")),
                 button("results (CSV)", "csv", j.id, () => saveRecords(j.id, "csv")));
    box.append(group);
  }
  box.hidden = false;
  if (run.jobs.length < 2) return;
  try {
    const body = { jobs: run.jobs.map((j) => j.id) };
    if (run.ks) body.k = run.ks;
    const resp = await api("/v1/compare", { method: "POST", body: JSON.stringify(body),
                                            headers: { "Content-Type": "application/json" } });
    if (!resp.ok) throw new Error(`Compare: ${await errorText(resp)}`);
    const text = await resp.text();
    if (evRun !== run) return;
    showCompare(JSON.parse(text), $("ev-compare-table"), $("ev-diffs"), $("ev-compare-said"));
    $("ev-compare").hidden = false;
    const group = document.createElement("span");
    group.className = "group";
    group.append("Compared:", button("report (JSON)", "compare", null, () =>
      saveBlob(`compare-${run.jobs[0].id}.json`, text, "application/json")),
                 button("report (HTML)", "compare-html", null, () =>
      saveCompareHtml(run.jobs[0].id, body)));
    box.append(group);
  } catch (e) {
    if (evRun === run) notice(e.message);
  }
}

// The compare report as the server's HTML page (the one `polysandbox
// compare` writes), byte for byte, asked again: its date is now.
async function saveCompareHtml(first, body) {
  try {
    const resp = await api("/v1/compare", { method: "POST", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json", "Accept": "text/html" } });
    if (!resp.ok) throw new Error(`Compare: ${await errorText(resp)}`);
    saveBlob(`compare-${first}.html`, await resp.blob());
  } catch (e) {
    notice(e.message);
  }
}

// The job's report: GET /v1/jobs/ID without items, byte for byte.
async function saveReport(id) {
  try {
    const resp = await api(`/v1/jobs/${encodeURIComponent(id)}?limit=0`);
    if (!resp.ok) throw new Error(`Report of ${id}: ${await errorText(resp)}`);
    saveBlob(`${id}.json`, await resp.blob());
  } catch (e) {
    notice(e.message);
  }
}

// The job's records in sample order, a page of 1000 at a time, as JSON
// Lines or CSV.
async function saveRecords(id, kind) {
  try {
    const records = [];
    for (let offset = 0; offset != null;) {
      const resp = await api(`/v1/jobs/${encodeURIComponent(id)}?offset=${offset}&limit=1000`);
      if (!resp.ok) throw new Error(`Records of ${id}: ${await errorText(resp)}`);
      const page = await resp.json();
      for (const it of page.items || []) if (it.record) records.push(it.record);
      offset = page.next;
    }
    if (kind === "csv") saveBlob(`${id}.csv`, csvOf(records), "text/csv");
    else saveBlob(`${id}.jsonl`, jsonLines(records), "application/jsonl");
  } catch (e) {
    notice(e.message);
  }
}

// Show the view the location's fragment names (#status), else the Playground.
const VIEWS = { playground: null, sandboxes: refreshSandboxes, evaluate: null, status: refreshStatus };
let viewTimer = null;

function showView() {
  const name = location.hash.slice(1);
  const view = Object.hasOwn(VIEWS, name) ? name : "playground";
  for (const v of Object.keys(VIEWS)) $(v).hidden = v !== view;
  document.querySelectorAll("header nav a").forEach((a) => {
    if (a.dataset.view === view) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  });
  clearInterval(viewTimer);
  viewTimer = null;
  if (VIEWS[view]) {
    VIEWS[view]();
    viewTimer = setInterval(VIEWS[view], REFRESH_MS);
  }
}

// ---- wiring ------------------------------------------------------------------

function saveToken() {
  const t = $("token").value.trim();
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
  $("token").value = "";
  $("token-box").hidden = true;
  notice("");
  loadLists();
}

document.addEventListener("DOMContentLoaded", () => {
  limitFields();
  $("code").addEventListener("keydown", editorKey);
  $("template").addEventListener("change", () => sampleFor($("template").value));
  $("run").addEventListener("click", run);
  $("stop").addEventListener("click", () => running && running.abort());
  $("token-button").addEventListener("click", () => {
    $("token-box").hidden = !$("token-box").hidden;
    if (!$("token-box").hidden) $("token").focus();
  });
  $("token-save").addEventListener("click", saveToken);
  $("token").addEventListener("keydown", (ev) => { if (ev.key === "Enter") saveToken(); });
  document.addEventListener("keydown", (ev) => {
    // (the code editor runs its own Ctrl+Enter and marks it handled)
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && !ev.defaultPrevented &&
        !$("playground").hidden) {
      ev.preventDefault();
      run();
    }
  });
  $("sb-create").addEventListener("click", createSandbox);
  $("sb-provider").addEventListener("change", refreshSandboxes);
  $("sb-exec").addEventListener("click", execCommand);
  $("sb-upload").addEventListener("click", uploadFile);
  $("sb-download").addEventListener("click", downloadFile);
  $("sb-files-refresh").addEventListener("click", listFiles);
  $("ev-start").addEventListener("click", startEval);
  $("ev-filter").addEventListener("change", filterItems);
  $("ev-canonical").addEventListener("change", () => { $("ev-samples").disabled = $("ev-canonical").checked; });
  $("sb-command").addEventListener("keydown", (ev) => { if (ev.key === "Enter") execCommand(); });
  window.addEventListener("hashchange", showView);
  showView();
  loadLists();
  loadEditor();
});
