// simproxy's dashboard: reads and changes the fleet through the admin API (/api/v2/...) only.
// No framework and no build step: served as is from the admin port.
"use strict";

const API = "/api/v2/service";
const MODES = ["simulate", "spy", "capture", "modify", "synthesize", "diff"];
const COLOURS = { simulate: "#2f6fdf", spy: "#17a589", capture: "#e67e22", modify: "#8e44ad", synthesize: "#c0392b", diff: "#7f8c8d" };
const POLL_MS = 2000;
const TRAFFIC_SECONDS = 300;
const TOKEN_KEY = "simproxy-token";

const $ = (id) => document.getElementById(id);
let timer = null;
let editingState = false;

class Unauthorized extends Error {}

async function api(method, path, body, raw) {
  const headers = {};
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  let payload;
  if (raw !== undefined) payload = raw;
  else if (body !== undefined) { payload = JSON.stringify(body); headers["Content-Type"] = "application/json"; }
  const response = await fetch(path, { method, headers, body: payload });
  if (response.status === 401) throw new Unauthorized();
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!response.ok) throw new Error((data && data.error) || `${response.status} ${response.statusText}`);
  return data;
}

function cell(row, text, className) {
  const td = row.insertCell();
  td.textContent = text === undefined || text === null ? "" : String(text);
  if (className) td.className = className;
  return td;
}

// What reaches the client of an answer written with a fault (docs/faults.md): these three
// send none of it, so the status the simulation chose is struck out; the others send the status.
const NO_ANSWER = {
  connectionReset: "the connection was reset instead",
  emptyResponse: "the connection was closed with nothing sent",
  randomDataThenClose: "random bytes were sent instead, then the connection was closed",
};
const SOME_ANSWER = {
  malformedChunk: "the status and headers were sent, then a broken chunked body",
  dribble: "the answer was sent slowly, its body in pieces",
  bandwidth: "the answer was sent at a limited rate",
};

// A status cell: the status, and when the answer got a fault (a journal entry's), or may get one (a
// pair's, with its fraction), the fault's type styled as an error, what the client gets in its title.
function statusCell(row, response, ofPair) {
  const td = cell(row, response.status);
  const fault = response.fault;
  if (!fault) return td;
  const status = document.createElement(!ofPair && fault.type in NO_ANSWER ? "s" : "span");
  status.textContent = String(response.status);
  const tag = document.createElement("span");
  tag.className = "fault";
  const share = ofPair && fault.fraction !== undefined ? ` ${+(fault.fraction * 100).toFixed(2)}%` : "";
  tag.textContent = fault.type + share;
  td.replaceChildren(status, " ", tag);
  const what = NO_ANSWER[fault.type] || SOME_ANSWER[fault.type] || `fault ${fault.type}`;
  td.title = ofPair ? `answered with a fault${share && ` (${share.trim()} of requests)`}: ${what}`
    : `the simulation chose ${response.status}; ${what}`;
  return td;
}

function firstValue(matchers) {
  if (!Array.isArray(matchers) || !matchers.length) return "*";
  const m = matchers[0];
  return m.matcher === "exact" ? String(m.value) : `${m.matcher}: ${typeof m.value === "string" ? m.value : JSON.stringify(m.value)}`;
}

// -- login -------------------------------------------------------------------------------------------------

function showLogin(message) {
  stopPolling();
  $("main").hidden = true;
  $("login").hidden = false;
  $("logout").hidden = true;
  $("login-error").textContent = message || "";
}

async function login(event) {
  event.preventDefault();
  const response = await fetch("/api/token-auth", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ username: $("login-user").value, password: $("login-password").value }),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    $("login-error").textContent = data.error || (response.status === 429 ? "Too many attempts: wait 10 minutes" : "Wrong user or password");
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, data.token);
  $("login-password").value = "";
  start();
}

async function logout() {
  try { await api("GET", "/api/logout"); } catch { /* the token goes anyway */ }
  sessionStorage.removeItem(TOKEN_KEY);
  showLogin("Logged out");
}

// -- mode and destination ---------------------------------------------------------------------------------

function showModeArguments() {
  const mode = $("mode-select").value;
  for (const label of document.querySelectorAll("#mode-form label[data-for]")) {
    label.hidden = !label.dataset.for.split(" ").includes(mode);
  }
}

function renderMode(view) {
  $("mode-current").textContent = view.mode;
  if (!$("mode-form").contains(document.activeElement)) {
    $("mode-select").value = view.mode;
    const args = view.arguments || {};
    $("mode-matching").value = args.matchingStrategy || "strongest";
    $("mode-headers").value = (args.headersWhitelist || []).join(", ");
    $("mode-stateful").checked = Boolean(args.stateful);
    $("mode-overwrite").checked = Boolean(args.overwriteDuplicate);
    $("mode-capture-on-miss").checked = Boolean(args.captureOnMiss);
    showModeArguments();
  }
}

async function switchMode(event) {
  event.preventDefault();
  const mode = $("mode-select").value;
  const args = {};
  if (mode === "simulate" || mode === "spy") args.matchingStrategy = $("mode-matching").value;
  if (["capture", "spy", "diff"].includes(mode)) {
    const headers = $("mode-headers").value.split(",").map((h) => h.trim()).filter(Boolean);
    if (headers.length) args.headersWhitelist = headers;
  }
  if (mode === "capture" || mode === "spy") {
    args.stateful = $("mode-stateful").checked;
    args.overwriteDuplicate = $("mode-overwrite").checked;
  }
  if (mode === "spy") args.captureOnMiss = $("mode-capture-on-miss").checked;
  try {
    renderMode(await api("PUT", `${API}/mode`, { mode, arguments: args }));
    $("mode-error").textContent = "";
    document.activeElement.blur();
  } catch (error) { handle(error, "mode-error"); }
}

async function saveDestination(event) {
  event.preventDefault();
  try {
    const view = await api("PUT", `${API}/destination`, { destination: $("destination").value });
    $("destination").value = view.destination;
    $("destination-error").textContent = "";
    document.activeElement.blur();
  } catch (error) { handle(error, "destination-error"); }
}

// -- usage, traffic, hit ratio ----------------------------------------------------------------------------

function renderUsage(counters) {
  const body = $("usage").tBodies[0];
  body.replaceChildren();
  for (const mode of MODES) {
    const row = body.insertRow();
    cell(row, mode);
    cell(row, counters[mode] || 0).id = `usage-${mode}`;
  }
}

function renderTraffic(view) {
  const canvas = $("traffic-chart");
  const ctx = canvas.getContext("2d");
  const width = canvas.width, height = canvas.height, pad = 28;
  ctx.clearRect(0, 0, width, height);
  const perMode = {};
  let hits = 0, lookups = 0;
  for (const series of view.series) {
    const counts = perMode[series.mode] || (perMode[series.mode] = new Array(series.requests.length).fill(0));
    series.requests.forEach((n, i) => { counts[i] += n; });
    if (series.mode === "simulate" || series.mode === "spy") {
      const total = series.requests.reduce((a, b) => a + b, 0);
      lookups += total;
      if (series.outcome === "hit") hits += total;
    }
  }
  $("hit-ratio").textContent = lookups ? `${((100 * hits) / lookups).toFixed(1)}%` : "–";
  $("hit-detail").textContent = `${hits} hits of ${lookups} simulate and spy requests, last 5 minutes`;
  const max = Math.max(1, ...Object.values(perMode).flatMap((c) => c));
  ctx.strokeStyle = "#dfe3ea";
  ctx.fillStyle = "#6b7385";
  ctx.font = "11px system-ui";
  for (let i = 0; i <= 4; i++) {
    const y = pad + ((height - 2 * pad) * i) / 4;
    ctx.beginPath(); ctx.moveTo(pad, y); ctx.lineTo(width - 8, y); ctx.stroke();
    ctx.fillText(String(Math.round(max * (1 - i / 4))), 2, y + 4);
  }
  const legend = $("traffic-legend");
  legend.replaceChildren();
  for (const [mode, counts] of Object.entries(perMode)) {
    ctx.strokeStyle = COLOURS[mode] || "#333";
    ctx.lineWidth = 2;
    ctx.beginPath();
    counts.forEach((n, i) => {
      const x = pad + ((width - pad - 8) * i) / Math.max(1, counts.length - 1);
      const y = height - pad - ((height - 2 * pad) * n) / max;
      if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    });
    ctx.stroke();
    const item = document.createElement("span");
    const swatch = document.createElement("i");
    swatch.style.background = COLOURS[mode] || "#333";
    item.append(swatch, `${mode}: ${counts[counts.length - 1] || 0}/s now`);
    legend.append(item);
  }
  ctx.lineWidth = 1;
}

// -- journal and unmatched requests -----------------------------------------------------------------------

function journalMatches(entry) {
  const path = $("filter-path").value.trim();
  const method = $("filter-method").value;
  const status = $("filter-status").value.trim();
  if (path && !entry.request.path.includes(path)) return false;
  if (method && entry.request.method !== method) return false;
  if (status && String(entry.response.status) !== status && !faultNamed(entry.response.fault, status)) return false;
  return true;
}

// The status filter also takes a fault: "fault" for every faulted answer, else part of its type ("reset").
function faultNamed(fault, text) {
  if (!fault) return false;
  const wanted = text.toLowerCase();
  return wanted === "fault" || fault.type.toLowerCase().includes(wanted);
}

let journalEntries = [];
let journalTotal = 0;

function renderJournal(view) {
  journalEntries = view.journal || [];
  journalTotal = view.total;
  $("journal-total").textContent = `(${journalTotal} entries)`;
  const body = $("journal").tBodies[0];
  body.replaceChildren();
  for (const entry of journalEntries.filter(journalMatches).slice(0, 100)) {
    const row = body.insertRow();
    cell(row, (entry.timeStarted || "").replace("T", " ").slice(0, 23));
    cell(row, entry.mode);
    cell(row, entry.request.method);
    cell(row, entry.request.destination);
    cell(row, entry.request.path + (entry.request.query ? `?${entry.request.query}` : ""), "wrap");
    statusCell(row, entry.response);
    cell(row, entry.latency === undefined ? "" : Number(entry.latency).toFixed(2));
    row.addEventListener("click", () => showEntry(entry.id));
  }
  renderUnmatched(journalEntries);
}

function showEntry(id) {
  const entry = journalEntries.find((e) => e.id === id);
  const detail = $("journal-detail");
  if (!entry) { detail.hidden = true; return; }
  detail.textContent = JSON.stringify(entry, null, 2);
  detail.hidden = false;
}

function isMiss(entry) {
  return entry.response.status === 502 && typeof entry.response.body === "string" && entry.response.body.includes(" Error!");
}

function renderUnmatched(entries) {
  const groups = new Map();
  for (const entry of entries.filter(isMiss)) {
    const key = `${entry.request.method} ${entry.request.destination}${entry.request.path}`;
    const group = groups.get(key) || { count: 0, missed: "" };
    group.count += 1;
    const fields = /did not match on the following fields:\s*\[([^\]]*)\]/.exec(entry.response.body);
    if (fields && !group.missed) group.missed = fields[1];
    groups.set(key, group);
  }
  const body = $("unmatched").tBodies[0];
  body.replaceChildren();
  for (const [key, group] of [...groups].sort((a, b) => b[1].count - a[1].count).slice(0, 10)) {
    const row = body.insertRow();
    cell(row, group.count);
    cell(row, key, "wrap");
    cell(row, group.missed || "no pair came close");
  }
}

async function clearJournal() {
  try { renderJournal(await api("DELETE", "/api/v2/journal")); } catch (error) { handle(error); }
}

// -- simulation -------------------------------------------------------------------------------------------

function renderPairs(view) {
  const pairs = (view.data && view.data.pairs) || [];
  $("pair-count").textContent = `(${pairs.length} pairs)`;
  const body = $("pairs").tBodies[0];
  body.replaceChildren();
  pairs.slice(0, 200).forEach((pair, i) => {
    const row = body.insertRow();
    cell(row, i + 1);
    cell(row, firstValue(pair.request.method));
    cell(row, firstValue(pair.request.destination));
    cell(row, firstValue(pair.request.path), "wrap");
    statusCell(row, pair.response, true);
  });
}

async function uploadSimulation() {
  const file = $("sim-file").files[0];
  if (!file) { $("sim-message").textContent = "Choose a simulation file first"; return; }
  try {
    const view = await api("PUT", "/api/v2/simulation", undefined, await file.text());
    renderPairs(view);
    $("sim-message").textContent = `Loaded ${file.name}`;
  } catch (error) { handle(error, "sim-message"); }
}

async function downloadSimulation() {
  try {
    const view = await api("GET", "/api/v2/simulation");
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([JSON.stringify(view, null, 2)], { type: "application/json" }));
    link.download = "simulation.json";
    link.click();
    URL.revokeObjectURL(link.href);
  } catch (error) { handle(error, "sim-message"); }
}

// -- state ------------------------------------------------------------------------------------------------

function renderState(view) {
  if (editingState) return;
  const body = $("state").tBodies[0];
  body.replaceChildren();
  for (const [key, value] of Object.entries(view.state || {}).sort()) {
    const row = body.insertRow();
    cell(row, key);
    const input = document.createElement("input");
    input.value = value;
    input.size = 12;
    input.addEventListener("focus", () => { editingState = true; });
    input.addEventListener("change", () => setState(key, input.value));
    input.addEventListener("blur", () => { editingState = false; });
    row.insertCell().append(input);
    const remove = document.createElement("button");
    remove.textContent = "×";
    remove.title = `delete ${key}`;
    remove.addEventListener("click", () => deleteStateKey(key));
    row.insertCell().append(remove);
  }
}

async function setState(key, value) {
  try {
    await api("PATCH", "/api/v2/state", { state: { [key]: value } });
    $("state-error").textContent = "";
    editingState = false;
    renderState(await api("GET", "/api/v2/state"));
  } catch (error) { handle(error, "state-error"); }
}

async function deleteStateKey(key) {
  try {
    const current = (await api("GET", "/api/v2/state")).state || {};
    delete current[key];
    await api("PUT", "/api/v2/state", { state: current });
    renderState(await api("GET", "/api/v2/state"));
  } catch (error) { handle(error, "state-error"); }
}

async function addState(event) {
  event.preventDefault();
  const key = $("state-key").value.trim();
  if (!key) return;
  await setState(key, $("state-value").value);
  $("state-key").value = "";
  $("state-value").value = "";
}

// -- workers ----------------------------------------------------------------------------------------------

function renderWorkers(view) {
  $("live").textContent = `${view.workers} worker${view.workers === 1 ? "" : "s"}`;
  const list = $("workers");
  list.replaceChildren();
  for (const instance of view.instances) {
    const item = document.createElement("li");
    const pids = instance.workers.map((w) => w.pid).filter((p) => p !== null).join(", ");
    item.textContent = `${instance.id}: ${instance.workers.length} (pid ${pids})`;
    list.append(item);
  }
}

// -- polling ----------------------------------------------------------------------------------------------

function handle(error, where) {
  if (error instanceof Unauthorized) { showLogin("Log in to see the fleet"); return; }
  if (where) $(where).textContent = error.message;
  else $("status").textContent = error.message;
}

async function refresh() {
  try {
    const [config, traffic, journal, state, workers] = await Promise.all([
      api("GET", API),
      api("GET", `${API}/traffic?seconds=${TRAFFIC_SECONDS}`),
      api("GET", "/api/v2/journal?limit=200&sort=timestarted:desc"),
      api("GET", "/api/v2/state"),
      api("GET", `${API}/workers`),
    ]);
    $("version").textContent = config.version || "";
    renderMode(config);
    if (document.activeElement !== $("destination")) $("destination").value = config.destination || "";
    renderUsage(((config.usage || {}).counters) || {});
    renderTraffic(traffic);
    renderJournal(journal);
    renderState(state);
    renderWorkers(workers);
    $("status").textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    handle(error);
  }
}

async function refreshPairs() {
  try { renderPairs(await api("GET", "/api/v2/simulation")); } catch (error) { handle(error); }
}

function stopPolling() {
  if (timer !== null) clearInterval(timer);
  timer = null;
}

async function start() {
  stopPolling();
  $("login").hidden = true;
  $("main").hidden = false;
  $("logout").hidden = !sessionStorage.getItem(TOKEN_KEY);
  await Promise.all([refresh(), refreshPairs()]);
  if ($("main").hidden) return; // the API asked for a login
  let ticks = 0;
  timer = setInterval(() => {
    refresh();
    if (++ticks % 3 === 0) refreshPairs();
  }, POLL_MS);
}

$("login-form").addEventListener("submit", login);
$("logout").addEventListener("click", logout);
$("mode-select").addEventListener("change", showModeArguments);
$("mode-form").addEventListener("submit", switchMode);
$("destination-form").addEventListener("submit", saveDestination);
for (const event of ["input", "change"]) {  // typing in the text fields; choosing a method
  $("journal-filter").addEventListener(event, () => renderJournal({ journal: journalEntries, total: journalTotal }));
}
$("journal-filter").addEventListener("submit", (event) => event.preventDefault());
$("journal-clear").addEventListener("click", clearJournal);
$("sim-upload").addEventListener("click", uploadSimulation);
$("sim-download").addEventListener("click", downloadSimulation);
$("state-form").addEventListener("submit", addState);
start();
