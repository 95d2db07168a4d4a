// core/server/web/report.js - what the Evaluate view hands out and shows
// once its jobs ended: files saved by the browser (a blob and an anchor:
// the token is in a header, so no plain link can fetch them), the records
// as JSON Lines or CSV, and the side-by-side report of POST /v1/compare
// (the one `polysandbox compare --json` prints) as tables; app.js also
// saves that report as the server's HTML page.
//
// Every value of a report or a record is put in the page as text.

// Save @data (a Blob or a string) as the file @name.
export function saveBlob(name, data, type = "application/octet-stream") {
  const blob = data instanceof Blob ? data : new Blob([data], { type });
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  return blob.size;
}

// The records, one JSON object a line.
export const jsonLines = (records) => records.map((r) => JSON.stringify(r) + "\n").join("");

// The columns of the CSV, in this order: the fields of a record (a field
// a record lacks is an empty cell; an object or array, its JSON).
export const CSV_COLUMNS = ["task_id", "sample", "provider", "verdict", "passed", "status",
                            "exit_code", "signal", "time_ns", "cpu_ns", "peak_memory_bytes",
                            "attempts", "attempts_time_ns", "tests_passed", "tests_total",
                            "reason", "completion", "output"];

// One CSV field (RFC 4180): quoted when it holds a comma, quote or line
// break.  A text starting with = + - @ or a tab gets a leading ' so that
// a spreadsheet shows it rather than runs it as a formula (the reason
// and the output are a sandbox's words).
function csvField(v) {
  if (v == null) return "";
  let s = typeof v === "object" ? JSON.stringify(v) : String(v);
  if (typeof v === "string" && /^[=+\-@\t\r]/.test(s)) s = "'" + s;
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

// The records as CSV, a header line first, CRLF line ends (RFC 4180).
export function csvOf(records) {
  const lines = [CSV_COLUMNS.join(",")];
  for (const r of records) lines.push(CSV_COLUMNS.map((c) => csvField(r[c])).join(","));
  return lines.join("\r\n") + "\r\n";
}

function cells(tr, values, tag = "td") {
  for (const v of values) {
    const td = document.createElement(tag);
    if (v instanceof Node) td.append(v);
    else td.textContent = v == null ? "–" : String(v);
    tr.append(td);
  }
  return tr;
}

const fixed = (x, n) => (typeof x === "number" ? x.toFixed(n) : "–");

// The figures of a column of the report, as the table shows them.
export function columnFigures(col, ks) {
  const s = col.summary || {};
  const counts = s.counts || {};
  const graded = s.graded ?? 0;
  const passed = counts.passed ?? 0;
  return {
    label: col.label,
    samples: s.samples,
    passed,
    failed: graded - passed,
    errors: counts.sandbox_error ?? 0,
    passk: ks.map((k) => fixed((s.pass_at_k || {})[k], 4)),
    time: col.job && typeof col.job.wall_s === "number" ? col.job.wall_s.toFixed(2) + " s" : "–",
    p50: s.latency_ns ? (s.latency_ns.p50 / 1e6).toFixed(1) + " ms" : "–",
    p90: s.latency_ns && typeof s.latency_ns.p90 === "number"
      ? (s.latency_ns.p90 / 1e6).toFixed(1) + " ms" : "–",
    ...usageFigures(s.usage),
  };
}

// What a column's samples used (the summary's usage): CPU time, the
// largest peak memory, and the cost when the provider has a price.
export function usageFigures(u) {
  const cpu = u && u.cpu_ns && u.cpu_ns.samples ? u.cpu_ns.total : null;
  const mem = u && typeof u.peak_memory_bytes === "number" && u.peak_memory_bytes >= 0
    ? u.peak_memory_bytes : null;
  const cost = u && u.cost;
  return {
    cpu: cpu == null ? "–" : (cpu / 1e6).toFixed(1) + " ms",
    memory: mem == null ? "–" : (mem / 1048576).toFixed(1) + " MiB",
    cost: cost && typeof cost.total === "number"
      ? `${cost.total.toPrecision(4)} ${cost.currency || ""}`.trim() : "n/a",
  };
}

// The report @rep (POST /v1/compare's answer) into @table (a row per
// provider) and @diffs (a row per sample whose verdicts differ); @said
// gets the verdict of the comparison.
export function showCompare(rep, table, diffs, said) {
  const cols = rep.columns || [];
  const ks = Object.keys((cols[0] && cols[0].summary && cols[0].summary.pass_at_k) || {});
  table.replaceChildren(cells(document.createElement("tr"),
    ["provider", "samples", "passed", "failed", "errors", ...ks.map((k) => `pass@${k}`),
     "time", "latency p50", "latency p90", "CPU", "peak memory", "cost"], "th"));
  for (const col of cols) {
    const f = columnFigures(col, ks);
    const tr = cells(document.createElement("tr"),
      [f.label, f.samples, f.passed, f.failed, f.errors, ...f.passk, f.time, f.p50, f.p90,
       f.cpu, f.memory, f.cost]);
    tr.dataset.label = col.label;
    table.append(tr);
  }
  const list = rep.differences || [];
  said.textContent = rep.agree
    ? `Every one of the ${rep.samples} samples got the same verdict on each provider.`
    : `${list.length} of ${rep.samples} samples got different verdicts:`;
  said.className = rep.agree ? "agree" : "differs";
  diffs.replaceChildren();
  diffs.hidden = !list.length;
  if (!list.length) return;
  diffs.append(cells(document.createElement("tr"),
    ["sample", "task", ...cols.map((c) => c.label)], "th"));
  for (const d of list) {
    // the verdict first, then its reason under it
    const verdicts = cols.map((c) => {
      const cell = document.createDocumentFragment();
      const span = document.createElement("span");
      const v = (d.verdicts || {})[c.label];
      span.textContent = v == null ? "no record" : v;
      span.className = `verdict-${v}`;
      cell.append(span);
      const why = (d.reasons || {})[c.label];
      if (why) {
        const small = document.createElement("small");
        small.textContent = why;
        cell.append(document.createElement("br"), small);
      }
      return cell;
    });
    const tr = cells(document.createElement("tr"), [d.sample, d.task_id, ...verdicts]);
    tr.dataset.sample = d.sample;
    diffs.append(tr);
  }
}
