// app.js -- the fleet dashboard. It renders the overview (inlined in the
// page, then fetched from /api/overview every 2 s): the queues with their
// current and lifetime counts; charts with a time axis of processed and
// failed jobs per second, queue depth and wait time per queue (from
// /api/history, kept in Redis, when the server has it; else from the
// samples the server took in memory); the workers (/api/workers, when the
// server has it); the jobs of a queue by state (/api/jobs), a page at a
// time, with a search by id; one job in a detail pane (/api/job: payload
// pretty-printed when it is JSON, result, progress, its attempt history
// with each failed attempt's error, times, a flow parent's children); locks, pools, crons (with the dispatch log of
// one, /api/cron-history) and warm pools.
//
// Honest about failures: when the backend does not answer, a banner at
// the top says since when and why, every count and section says
// "unknown" (never "none"), and the header's time is the last successful
// update. Every change (retry, cancel, delete, run now, kill, purge,
// pause) asks for confirmation first, in the page's own dialog. Times are
// UTC, ISO 8601 with Z.
//
// No external library, no inline script or style: the page's policy
// (Content-Security-Policy) allows only this file and style.css, and the
// first overview comes as JSON data (<script type="application/json">).
// Data is only ever put in the page as text (textContent, attributes),
// never as markup. When the server is read-only (the overview's
// read_only), no control that changes anything is drawn: each such button
// has a data-action.
'use strict';

// The job states, as /api/jobs names them; a queue's count of each is its
// member with "_" for "-" (waiting-children: flow parents).
const STATES = ['pending', 'delayed', 'running', 'completed', 'dead',
                'waiting-children'];
// A qualitative palette (Tableau 10): neighbours differ in hue.
const COLORS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f',
                '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
const PAGE = 25;          // jobs per page unless #...&limit=N
const HISTORY_EVERY = 30000; // ms between fetches of /api/history
const WORKERS_EVERY = 10000; // ms between fetches of /api/workers
const UNREACHABLE = ['FLEET_EUNAVAILABLE', 'FLEET_ETIMEDOUT',
                     'FLEET_ECONNLOST'];
const NS = 'http://www.w3.org/2000/svg';

let selected = null;   // {queue, state, cursors: [c0, c1...], limit}
let cronSel = null;    // {ns, key}
let jobSel = null;     // {queue, id}
let readOnly = true;   // until the server says otherwise
let hooks = false;     // the server's test hooks (FLEET_DASH_TEST_HOOKS=1)
let lastGood = null;   // the last overview that had every part
let lastOk = null;     // ISO time of the last successful update
let down = null;       // {since, reason} while the dashboard's server is gone
let ov = null;         // the last overview
const hist = {res: 'minute', avail: null, at: 0, data: {}};
const workers = {avail: null, at: 0, list: null};
const requests = [];   // test hooks: every request the page sent

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k instanceof Node ? k : String(k));
  return e;
}

function svgEl(tag, attrs, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// A Unix ms time as UTC ISO 8601 ("2026-11-27T10:00:00Z"), '' for none.
function fmtTime(ms) {
  if (!ms) return '';
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

// An ISO time from the API shown as it is (UTC, with Z), or '-'.
function isoShort(s) {
  return s ? String(s).replace(/\.\d{3}Z$/, 'Z') : '-';
}

function showError(text) {
  const p = document.getElementById('error');
  p.textContent = text || '';
  p.hidden = !text;
}

// A request of the API; with the test hooks on, recorded for the probe.
async function api(url, opts) {
  let r;
  try {
    r = await fetch(url, opts);
  } catch (e) {
    if (hooks) requests.push(`${(opts && opts.method) || 'GET'} ${url} -> failed`);
    throw e;
  }
  if (hooks) requests.push(`${(opts && opts.method) || 'GET'} ${url} -> ${r.status}`);
  let body = null;
  try { body = await r.json(); } catch (e) { body = null; }
  return {status: r.status, ok: r.ok, body};
}

function errText(b) {
  return b ? (b.detail ? `${b.error}: ${b.detail}` : String(b.error)) : 'no answer';
}

// ---------------------------------------------------------------------------
// Confirmation

let onConfirm = null;

function ask(text, ok, fn) {
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = ok;
  onConfirm = fn;
  document.getElementById('confirm').hidden = false;
  document.getElementById('confirm-cancel').focus();
}

function closeConfirm() {
  document.getElementById('confirm').hidden = true;
  onConfirm = null;
}

// A button that changes something: it asks first, then POSTs `url`.
function actionButton(action, label, question, url, after) {
  return el('button', {'data-action': action, onclick: () =>
    ask(question, label, () => post(url, after))}, label);
}

async function post(url, after) {
  try {
    const r = await api(url, {method: 'POST', headers: {'X-Fleet-Dash': '1'}});
    if (!r.ok) showError(`${url.split('?')[0]}: ${errText(r.body)}`);
    else showError('');
    if (r.ok && after) after();
  } catch (e) {
    showError(String(e));
  }
  refresh();
}

// ---------------------------------------------------------------------------
// Outage

// Whether the backend answered everything of the overview `o`.
const healthy = o => o && !o.error && !down;

function renderOutage() {
  const box = document.getElementById('outage');
  let text = '';
  if (down) {
    text = `Dashboard server unreachable since ${down.since}: ${down.reason}`;
  } else if (ov && ov.error) {
    const b = ov.backend || {};
    const what = UNREACHABLE.includes(ov.error) ? 'Redis unreachable'
                                                : 'Backend queries failing';
    text = `${what} since ${b.down_since || ov.now || '?'}: ` +
           (b.reason || `${ov.error}: ${ov.detail || ''}`);
  }
  box.textContent = text;
  box.hidden = !text;
  document.getElementById('updated').textContent =
    'updated ' + (lastOk || 'never');
}

const unknownCell = (attrs) =>
  el('td', Object.assign({class: 'unknown'}, attrs || {}), 'unknown');

function unknownRow(body, cols, what) {
  body.append(el('tr', {class: 'unknown-row'},
    el('td', {colspan: cols, class: 'unknown'},
       `unknown: ${what} could not be read`)));
}

// ---------------------------------------------------------------------------
// Queues

// A queue's count now and over its lifetime: the dead list's size and
// every job that ever died (the same for completed).
function counts(q) {
  const pick = (...ks) => { for (const k of ks) if (q[k] !== undefined) return q[k]; };
  return {
    pending: q.pending, delayed: q.delayed, running: q.running,
    'waiting-children': q.waiting_children,
    completed: pick('completed_now', 'completed_kept'),
    'completed-lifetime': pick('completed_lifetime', 'completed'),
    dead: pick('dead_now', 'dead_kept'),
    'dead-lifetime': pick('dead_lifetime', 'dead'),
  };
}
const COUNT_COLS = ['pending', 'delayed', 'running', 'waiting-children',
                    'completed', 'completed-lifetime', 'dead', 'dead-lifetime'];
// The state a count's link opens.
const stateOf = c => c.replace('-lifetime', '');

function renderQueues(queues) {
  const body = document.querySelector('#queues tbody');
  body.replaceChildren();
  if (!queues) {
    // The queues last seen: by this page, or by the server's samples.
    const h = (ov && ov.history) || [];
    const known = lastGood ? lastGood.queues
      : h.length ? Object.keys(h[h.length - 1].c || {}).map(queue => ({queue}))
      : [];
    for (const q of known) {
      const tr = el('tr', {'data-queue': q.queue},
                    el('td', {class: 'q-name'}, q.queue));
      for (const c of COUNT_COLS) tr.append(unknownCell({'data-state': c}));
      tr.append(unknownCell(), unknownCell(), el('td'));
      body.append(tr);
    }
    if (known.length === 0) unknownRow(body, 12, 'the queues');
    return;
  }
  if (queues.length === 0)
    body.append(el('tr', {}, el('td', {colspan: 12, class: 'muted'},
                                'no queue under this prefix')));
  for (const q of queues) {
    const n = counts(q);
    const tr = el('tr', {'data-queue': q.queue,
                         class: selected && selected.queue === q.queue ? 'sel' : ''});
    tr.append(el('td', {class: 'q-name'}, q.queue));
    for (const c of COUNT_COLS) {
      const td = el('td', {class: 'num' + (c === 'dead' && n.dead ? ' dead' : ''),
                           'data-state': c, 'data-count': n[c]});
      td.append(el('a', {href: '#', onclick: (e) => {
        e.preventDefault(); selectQueue(q.queue, stateOf(c));
      }}, n[c] === undefined ? '-' : n[c]));
      tr.append(td);
    }
    tr.append(el('td', {class: q.paused ? 'paused' : ''},
                 q.paused ? 'paused' : 'active'));
    const r = sampleSeries(q.queue, 'processed');
    tr.append(el('td', {class: 'num'},
                 r.length ? r[r.length - 1][1].toFixed(1) : '-'));
    const action = q.paused ? 'resume' : 'pause';
    tr.append(el('td', {}, readOnly ? '' : actionButton(action,
      q.paused ? 'Resume' : 'Pause',
      `${q.paused ? 'Resume' : 'Pause'} queue ${q.queue}?`,
      `/api/${action}?queue=` + encodeURIComponent(q.queue))));
    body.append(tr);
  }
}

// ---------------------------------------------------------------------------
// Charts

// [[t ms, value]...] of `queue` from the server's in-memory samples
// ({t: Unix ms, c: {queue: completed}, d: {queue: dead}, p: {queue:
// pending}}): rates between two samples, or the depth at each.
function sampleSeries(queue, metric) {
  const h = (ov && ov.history) || [];
  const out = [];
  if (metric === 'depth') {
    for (const s of h) if (s.p && s.p[queue] !== undefined) out.push([s.t, s.p[queue]]);
    return out;
  }
  if (metric === 'wait') return out;
  const key = metric === 'processed' ? 'c' : 'd';
  for (let k = 1; k < h.length; k++) {
    const a = h[k - 1], b = h[k];
    if (!a[key] || !b[key] || a[key][queue] === undefined ||
        b[key][queue] === undefined) continue;
    out.push([b.t, Math.max(0, (b[key][queue] - a[key][queue]) * 1000 /
                                   Math.max(1, b.t - a.t))]);
  }
  return out;
}

// [[t ms, value|null]...] of `queue` from /api/history: per second for
// the counts (a point counts a minute or a day).
function historySeries(queue, metric) {
  const pts = hist.data[queue];
  if (!pts) return null;
  const span = hist.res === 'day' ? 86400 : 60;
  // The last 3 hours of minutes, or the last 30 days.
  const keep = hist.res === 'day' ? 30 * 86400e3 : 3 * 3600e3;
  const last = pts.length ? Date.parse(pts[pts.length - 1].t) : 0;
  return pts.filter(p => Date.parse(p.t) > last - keep).map(p => {
    const t = Date.parse(p.t);
    if (metric === 'processed') return [t, p.processed / span];
    if (metric === 'failed') return [t, p.failed / span];
    if (metric === 'depth') return [t, p.depth];
    return [t, p.wait_ms];
  });
}

function seriesOf(queue, metric) {
  if (hist.avail) {
    const s = historySeries(queue, metric);
    if (s) return s;
  }
  return sampleSeries(queue, metric);
}

// Ticks of a time axis from t0 to t1 (ms): a round step giving 3 to 6.
function timeTicks(t0, t1) {
  const steps = [60e3, 300e3, 900e3, 1800e3, 3600e3, 3 * 3600e3, 6 * 3600e3,
                 12 * 3600e3, 86400e3, 7 * 86400e3];
  let step = steps[steps.length - 1];
  for (const s of steps) if ((t1 - t0) / s <= 6) { step = s; break; }
  const out = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) out.push(t);
  return {ticks: out, step};
}

function tickLabel(t, step) {
  const iso = new Date(t).toISOString();
  return step >= 86400e3 ? iso.slice(5, 10) : iso.slice(11, 16);
}

// The y of value v on a log scale (log10(1 + v)) up to max, so that one
// busy queue does not flatten the others.
const logY = (v, max) => Math.log10(1 + v) / Math.log10(1 + max);

function drawChart(fig, names, colors, metric, unknown) {
  const svg = fig.querySelector('svg');
  const W = Math.max(160, Math.round(svg.getBoundingClientRect().width) || 400);
  const H = Math.max(90, Math.round(svg.getBoundingClientRect().height) || 150);
  const L = 38, B = 18, T = 6;
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.replaceChildren();
  if (unknown) {
    svg.append(svgEl('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle',
                              class: 'unknown', fill: '#a15c00'}, 'unknown'));
    return;
  }
  const series = names.map(n => ({name: n, color: colors[n],
                                  pts: seriesOf(n, metric)}));
  let t0 = Infinity, t1 = -Infinity, max = 0, any = false;
  for (const s of series) for (const [t, v] of s.pts) {
    t0 = Math.min(t0, t); t1 = Math.max(t1, t);
    if (v !== null && v !== undefined) { max = Math.max(max, v); any = true; }
  }
  if (!any) {
    svg.append(svgEl('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle',
                              fill: '#778', 'font-size': 12},
      metric === 'wait' && !hist.avail ? 'needs history in Redis'
                                       : 'no data yet'));
    return;
  }
  if (t1 - t0 < 60e3) t0 = t1 - 60e3;
  max = Math.max(max, 1);
  const x = t => L + (W - L - 4) * (t - t0) / (t1 - t0);
  const y = v => H - B - (H - B - T) * logY(v, max);
  // The y axis: 0, then powers of ten up to the largest value.
  const ys = [0];
  for (let p = 1; p <= max * 1.0001; p *= 10) ys.push(p);
  if (ys[ys.length - 1] < max) {
    // The largest value too, instead of a power of ten too near it.
    if (ys.length > 2 && y(ys[ys.length - 1]) - y(max) < 12) ys.pop();
    ys.push(Number(max.toPrecision(2)));
  }
  for (const v of ys) {
    svg.append(svgEl('line', {x1: L, x2: W, y1: y(v), y2: y(v), stroke: '#e3e5ea'}));
    svg.append(svgEl('text', {x: L - 3, y: y(v) + 4, 'text-anchor': 'end',
                              'font-size': 10, fill: '#778'},
                     v >= 1000 ? (v / 1000) + 'k' : String(v)));
  }
  // The time axis, UTC.
  const {ticks, step} = timeTicks(t0, t1);
  for (const t of ticks) {
    svg.append(svgEl('line', {x1: x(t), x2: x(t), y1: T, y2: H - B,
                              stroke: '#f0f1f4', 'data-tick': fmtTime(t)}));
    // (No label over the axis' "UTC" or past its start.)
    if (x(t) > W - 42 || x(t) < L + 12) continue;
    svg.append(svgEl('text', {x: x(t), y: H - 4, 'text-anchor': 'middle',
                              'font-size': 10, fill: '#778'},
                     tickLabel(t, step)));
  }
  svg.append(svgEl('text', {x: W - 2, y: H - 4, 'text-anchor': 'end',
                            'font-size': 9, fill: '#99a'}, 'UTC'));
  for (const s of series) {
    let d = '', pen = 'M';
    s.pts.forEach(([t, v], k) => {
      if (v === null || v === undefined) { pen = 'M'; return; }
      d += `${pen}${x(t).toFixed(1)} ${y(v).toFixed(1)} `;
      // A point with no neighbour to draw a line to: a dot.
      const near = j => s.pts[j] && s.pts[j][1] !== null && s.pts[j][1] !== undefined;
      if (!near(k - 1) && !near(k + 1))
        svg.append(svgEl('circle', {cx: x(t).toFixed(1), cy: y(v).toFixed(1),
                                    r: 2.5, fill: s.color}));
      pen = 'L';
    });
    if (d) svg.append(svgEl('path', {d, fill: 'none', stroke: s.color,
                                     'stroke-width': 2, 'data-series': s.name}));
  }
}

function drawCharts() {
  const names = ((ov && ov.queues) || (lastGood && lastGood.queues) || [])
    .map(q => q.queue).sort();
  const colors = {};
  names.forEach((n, i) => { colors[n] = COLORS[i % COLORS.length]; });
  const unknown = !ov || !ov.queues;
  const legend = document.getElementById('chart-legend');
  legend.replaceChildren();
  for (const n of names) {
    const swatch = el('span', {class: 'swatch'});
    swatch.style.background = colors[n]; // CSSOM: allowed by the policy
    legend.append(el('span', {'data-legend': n}, swatch, n));
  }
  legend.append(el('span', {class: 'muted'}, 'log scale'));
  document.querySelectorAll('#charts figure').forEach(fig =>
    drawChart(fig, names, colors, fig.dataset.metric, unknown));
  const nav = document.getElementById('chart-res');
  nav.replaceChildren(...[['minute', 'Last 3 hours (per minute)'],
                          ['day', 'Last 30 days (per day)']].map(([r, label]) =>
    el('button', {class: r === hist.res ? 'on' : '', 'data-res': r,
                  onclick: () => { hist.res = r; hist.at = 0; loadHistory(); }},
       label)));
  nav.hidden = hist.avail !== true;
  document.getElementById('history-note').textContent =
    hist.avail === false
      ? 'history unavailable (this server keeps no history in Redis): the ' +
        'last 3 minutes the dashboard sampled itself'
      : hist.avail ? `history kept in Redis, one point per ${hist.res}` : '';
}

// Every queue's history (/api/history), every HISTORY_EVERY ms; a 404
// means the server has none: the charts use the samples.
async function loadHistory() {
  if (hist.avail === false || !ov || !ov.queues) return;
  if (Date.now() - hist.at < HISTORY_EVERY) return;
  hist.at = Date.now();
  const data = {};
  for (const q of ov.queues) {
    let r;
    try {
      r = await api(`/api/history?queue=${encodeURIComponent(q.queue)}` +
                    `&res=${hist.res}`);
    } catch (e) { return; }
    if (r.status === 404 && !(r.body && r.body.error && r.body.error.startsWith('FLEET_'))) {
      hist.avail = false;
      drawCharts();
      return;
    }
    if (r.ok && r.body && Array.isArray(r.body.points)) data[q.queue] = r.body.points;
  }
  hist.avail = true;
  hist.data = data;
  drawCharts();
}

// ---------------------------------------------------------------------------
// Workers

async function loadWorkers(force) {
  if (workers.avail === false) return;
  if (!force && Date.now() - workers.at < WORKERS_EVERY) return;
  workers.at = Date.now();
  let r;
  try { r = await api('/api/workers'); } catch (e) { return; }
  if (r.status === 404 && !(r.body && r.body.workers)) {
    workers.avail = false;
    document.getElementById('workers-section').hidden = true;
    return;
  }
  workers.avail = true;
  workers.list = r.ok && r.body ? r.body.workers : null;
  renderWorkers();
}

function renderWorkers() {
  if (!workers.avail) return;
  document.getElementById('workers-section').hidden = false;
  const body = document.querySelector('#workers tbody');
  body.replaceChildren();
  if (!workers.list || !healthy(ov)) { unknownRow(body, 8, 'the workers'); return; }
  if (workers.list.length === 0)
    body.append(el('tr', {}, el('td', {colspan: 8, class: 'muted'}, 'no worker')));
  for (const w of workers.list)
    body.append(el('tr', {'data-worker': w.id},
      el('td', {}, w.id), el('td', {}, w.kind), el('td', {}, w.name || ''),
      el('td', {}, w.host || ''), el('td', {class: 'num'}, w.pid),
      el('td', {}, isoShort(w.started)), el('td', {}, isoShort(w.seen)),
      el('td', {'data-jobs': (w.jobs || []).length},
         (w.jobs || []).join(', ') +
         (w.jobs_held > (w.jobs || []).length ? ` (${w.jobs_held} held)` : ''))));
}

// ---------------------------------------------------------------------------
// Locks, pools, crons, warm pools

function renderLocks(locks) {
  const body = document.querySelector('#locks tbody');
  body.replaceChildren();
  if (!locks) { unknownRow(body, 5, 'the locks'); return; }
  if (locks.length === 0)
    body.append(el('tr', {}, el('td', {colspan: 5, class: 'muted'}, 'no lock')));
  for (const l of locks) {
    body.append(el('tr', {'data-lock': l.name},
      el('td', {}, l.name),
      el('td', {}, l.held ? l.owner : el('span', {class: 'muted'}, 'free')),
      el('td', {class: 'num'}, l.held ? l.token : ''),
      el('td', {class: 'num'}, l.held ? (l.ttl_ms / 1000).toFixed(1) + ' s' : ''),
      el('td', {class: 'num'}, l.fence)));
  }
}

function renderPools(pools) {
  const box = document.getElementById('pools');
  box.replaceChildren();
  if (!pools) {
    box.append(el('p', {class: 'unknown'}, 'unknown: the pools could not be read'));
    return;
  }
  if (pools.length === 0) box.append(el('p', {class: 'muted'}, 'no pool'));
  for (const p of pools) {
    const t = el('table', {},
      el('thead', {}, el('tr', {}, el('th', {}, 'Worker'), el('th', {}, 'Node'),
                         el('th', {}, 'Jobs'))));
    const tb = el('tbody');
    for (const w of p.workers)
      tb.append(el('tr', {}, el('td', {}, w.worker), el('td', {}, w.node),
                   el('td', {class: 'num'}, w.jobs)));
    t.append(tb);
    box.append(el('div', {class: 'pool', 'data-pool': p.pool},
      el('strong', {}, p.pool), ' ',
      el('span', {class: 'muted'}, `revision ${p.revision}, ${p.worker_count} ` +
         `worker(s), ${p.job_count} job(s)`), el('div', {class: 'scroll'}, t)));
  }
}

// A definition's state (cron ls): finished (past its end or at its fire
// limit) and not started (its start ahead) are marked; the server says
// which, by its clock. Older servers give only `finished`.
function cronState(d) {
  return d.state || (d.finished ? 'finished' : 'active');
}

function renderCrons(spaces) {
  const body = document.querySelector('#crons tbody');
  body.replaceChildren();
  if (!spaces) { unknownRow(body, 13, 'the crons'); return; }
  let n = 0;
  for (const sp of spaces) {
    for (const d of sp.definitions) {
      n++;
      const state = cronState(d);
      const mark = state === 'active' ? '' : state.replace(' ', '-');
      body.append(el('tr', {'data-cron': sp.namespace + '/' + d.key,
                            'data-state': state,
                            class: (cronSel && cronSel.ns === sp.namespace &&
                                    cronSel.key === d.key ? 'sel ' : '') + mark},
        el('td', {}, sp.namespace), el('td', {}, d.key),
        el('td', {}, el('button', {onclick: () => selectCron(sp.namespace, d.key)},
                        'History')),
        el('td', {class: 'expr'}, d.expr), el('td', {}, d.tz),
        el('td', {class: d.enabled ? '' : 'paused'},
           d.enabled ? 'yes' : 'disabled'),
        el('td', {'data-start': d.start || ''}, isoShort(d.start)),
        el('td', {'data-end': d.end || ''}, isoShort(d.end)),
        el('td', {class: 'num', 'data-fires': d.fires == null ? '' : d.fires},
           d.max_fires == null ? '-' : `${d.fires} / ${d.max_fires}`),
        el('td', {class: 'state ' + mark}, state),
        el('td', {'data-next': d.next_due || ''}, isoShort(d.next_due)),
        el('td', {'data-last': d.last_fired || ''}, isoShort(d.last_fired)),
        el('td', {}, d.queue || '')));
    }
  }
  if (n === 0)
    body.append(el('tr', {}, el('td', {colspan: 13, class: 'muted'}, 'no cron')));
}

function selectCron(ns, key) {
  cronSel = {ns, key};
  history.replaceState(null, '', `#cron=${encodeURIComponent(ns)}&key=${encodeURIComponent(key)}`);
  document.querySelectorAll('#crons tr').forEach(tr =>
    tr.classList.toggle('sel', tr.dataset.cron === ns + '/' + key));
  loadCronHistory();
}

async function loadCronHistory() {
  const {ns, key} = cronSel;
  document.getElementById('cron-history-section').hidden = false;
  document.getElementById('cron-history-key').textContent = ns + '/' + key;
  const r = await api(`/api/cron-history?ns=${encodeURIComponent(ns)}&key=${encodeURIComponent(key)}`);
  const body = document.querySelector('#cron-history tbody');
  body.replaceChildren();
  if (!r.ok) {
    if (r.status >= 500) unknownRow(body, 5, 'the history');
    else showError(errText(r.body));
    return;
  }
  const h = r.body;
  if (h.entries.length === 0)
    body.append(el('tr', {}, el('td', {colspan: 5, class: 'muted'},
                                'no occurrence logged')));
  for (const e of h.entries)
    body.append(el('tr', {'data-fire': e.fire_ms},
      el('td', {}, isoShort(e.fire_time)), el('td', {}, e.node || ''),
      el('td', {class: 'num'}, e.token),
      el('td', {}, isoShort(e.dispatched)),
      el('td', {class: e.outcome.startsWith('failed') ? 'err' : ''}, e.outcome)));
}

function renderWarmpools(pools) {
  const body = document.querySelector('#warmpools tbody');
  body.replaceChildren();
  if (!pools) { unknownRow(body, 11, 'the warm pools'); return; }
  if (pools.length === 0)
    body.append(el('tr', {}, el('td', {colspan: 11, class: 'muted'},
                                'no warm pool')));
  for (const p of pools) {
    body.append(el('tr', {'data-warmpool': p.pool},
      el('td', {}, p.pool),
      el('td', {class: p.state === 'healthy' ? '' : 'paused'}, p.state),
      el('td', {class: 'num', 'data-idle': p.idle}, p.idle),
      el('td', {class: 'num'}, p.target === null ? '-' : p.target),
      el('td', {class: 'num'}, p.borrowed),
      el('td', {class: 'num'}, p.creating),
      el('td', {}, p.primary || el('span', {class: 'muted'}, 'none')),
      el('td', {class: 'num'}, p.primary_token),
      el('td', {class: 'num'}, p.failures),
      el('td', {class: 'num'}, p.backoff_ms ? (p.backoff_ms / 1000).toFixed(1) + ' s' : ''),
      el('td', {class: 'err', title: p.last_error || ''}, p.last_error || '')));
  }
}

// ---------------------------------------------------------------------------
// The overview

function render(o) {
  if (!o) return;
  ov = o;
  hooks = o.test_hooks === true;
  // Test hooks: #probe=W lays the page out W px wide (headless Chromium
  // will not make its window narrower than 500 px).
  const pw = parseInt(hashParams.get('probe') || '', 10);
  if (hooks && pw >= 200) document.documentElement.style.width = pw + 'px';
  readOnly = o.read_only !== false;
  if (!o.error) {
    lastGood = o;
    lastOk = (o.backend && o.backend.last_ok) || o.now || fmtTime(Date.now());
  } else if (!lastOk && o.backend && o.backend.last_ok) {
    lastOk = o.backend.last_ok;
  }
  document.getElementById('mode').textContent = readOnly ? 'read-only' : '';
  document.getElementById('backend').textContent =
    `${o.url} \u00b7 prefix ${o.prefix}`;
  renderOutage();
  renderQueues(o.queues);
  drawCharts();
  renderLocks(o.locks);
  renderPools(o.pools);
  renderCrons(o.crons);
  renderWarmpools(o.warmpools);
  renderWorkers();
  probe();
}

// The page without its server: every part unknown.
function renderDown(reason) {
  if (!down) down = {since: fmtTime(Date.now()), reason};
  const o = Object.assign({}, ov || {}, {queues: null, locks: null,
                          pools: null, crons: null, warmpools: null});
  ov = o;
  renderOutage();
  renderQueues(null);
  drawCharts();
  renderLocks(null);
  renderPools(null);
  renderCrons(null);
  renderWarmpools(null);
  renderWorkers();
  probe();
}

async function refresh() {
  let r;
  try {
    r = await api('/api/overview');
  } catch (e) {
    renderDown(String(e));
    return;
  }
  if (r.status === 401) {
    showError('the dashboard asks for its token: open /?token=TOKEN');
    return;
  }
  if (!r.body) { renderDown(`HTTP ${r.status}`); return; }
  down = null;
  render(r.body);
  loadHistory();
  loadWorkers();
  if (selected) await loadJobs();
  if (jobSel) await loadJob(jobSel.queue, jobSel.id);
  if (cronSel) await loadCronHistory();
  probe();
}

// ---------------------------------------------------------------------------
// Jobs

function setHash() {
  const p = new URLSearchParams();
  if (selected) {
    p.set('queue', selected.queue);
    p.set('state', selected.state);
    const c = selected.cursors[selected.cursors.length - 1];
    if (c) p.set('cursor', c);
    if (selected.limit !== PAGE) p.set('limit', selected.limit);
  }
  if (jobSel) p.set('job', jobSel.id);
  for (const k of ['probe', 'click', 'confirm'])
    if (hashParams.get(k)) p.set(k, hashParams.get(k));
  history.replaceState(null, '', '#' + p.toString());
}

function selectQueue(queue, state, cursor, limit) {
  selected = {queue, state, cursors: [0], limit: limit || PAGE};
  if (cursor) selected.cursors.push(cursor);
  jobSel = null;
  document.getElementById('job-view').hidden = true;
  setHash();
  document.querySelectorAll('#queues tr').forEach(tr =>
    tr.classList.toggle('sel', tr.dataset.queue === queue));
  loadJobs();
}

// A duration in ms as its largest whole unit: 2m, 1s, 500ms.
function fmtDur(ms) {
  for (const [u, n] of [['h', 3600000], ['m', 60000], ['s', 1000]])
    if (ms > 0 && ms % n === 0) return (ms / n) + u;
  return ms + 'ms';
}

// The queue's flow limits, what they hold now, and its groups with the
// most pending jobs (/api/queue: fleet queue stats).
async function loadFlow(queue) {
  const r = await api(`/api/queue?queue=${encodeURIComponent(queue)}`);
  const s = r.body;
  const p = document.getElementById('flow-limits');
  const table = document.getElementById('groups');
  const body = table.querySelector('tbody');
  const more = document.getElementById('groups-more');
  p.replaceChildren();
  body.replaceChildren();
  more.textContent = '';
  if (!r.ok) {
    if (r.status >= 500) p.append(el('span', {class: 'unknown'}, 'limits unknown'));
    else showError(errText(s));
    return;
  }
  const l = s.limits, f = s.flow;
  const item = (name, label, text) => {
    if (p.childNodes.length) p.append(' \u00b7 ');
    p.append(el('span', {'data-limit': name}, label + ' ',
                el('strong', {}, text)));
  };
  item('rate', 'Rate', l.rate_max
    ? `${l.rate_max}/${fmtDur(l.rate_ms)} (${f.rate_used} in the window)` : 'none');
  item('group-rate', 'Group rate', l.group_rate_max
    ? `${l.group_rate_max}/${fmtDur(l.group_rate_ms)}` : 'none');
  item('concurrency', 'Concurrency',
       (l.concurrency ? l.concurrency : 'none') + ` (${f.running} running)`);
  item('group-concurrency', 'Group concurrency',
       l.group_concurrency ? l.group_concurrency : 'none');
  item('held', 'Held until', f.held_until_ms ? fmtTime(f.held_until_ms) : 'not held');
  item('groups', 'Groups with pending jobs', f.groups);
  table.hidden = s.groups.length === 0;
  for (const g of s.groups)
    body.append(el('tr', {'data-group': g.group},
      el('td', {}, g.group),
      el('td', {class: 'num', 'data-pending': g.pending}, g.pending),
      el('td', {class: 'num'}, g.running),
      el('td', {class: 'num'}, g.rate_used),
      el('td', {class: 'num'}, g.weight),
      el('td', {}, fmtTime(g.held_until_ms))));
  if (s.groups_total > s.groups.length)
    more.textContent = `the ${s.groups.length} of ${s.groups_total} groups ` +
      'with the most pending jobs' +
      (s.groups_read < s.groups_total
        ? ` (of the first ${s.groups_read} by name)` : '');
}

// The buttons of a job in state `state` (in its row, or `all` in its
// detail pane), each asking first.
function jobButtons(queue, id, state, all) {
  if (readOnly) return [];
  const q = `queue=${encodeURIComponent(queue)}&id=${encodeURIComponent(id)}`;
  const b = [];
  const gone = () => { if (jobSel && jobSel.id === id) closeJob(); };
  if (state === 'dead')
    b.push(actionButton('retry', 'Retry', `Retry dead job ${id} of ${queue}?`,
                        '/api/retry?' + q));
  if (state === 'delayed' || (all && state === 'dead'))
    b.push(actionButton('run', 'Run now', `Run job ${id} of ${queue} now?`,
                        '/api/job/run?' + q));
  if (['pending', 'delayed', 'running', 'waiting-children'].includes(state))
    b.push(actionButton('cancel', 'Cancel',
      state === 'running' ? `Ask the worker of job ${id} of ${queue} to stop it?`
                          : `Cancel (delete) job ${id} of ${queue}?`,
      '/api/cancel?' + q));
  if (all && (state === 'pending' || state === 'delayed'))
    b.push(actionButton('kill', 'Kill', `Kill job ${id} of ${queue} (move it to dead)?`,
                        '/api/job/kill?' + q));
  if (state === 'dead' || state === 'completed' || (all && state !== 'running'))
    b.push(actionButton('delete', 'Delete',
                        `Delete job ${id} of ${queue}? This cannot be undone.`,
                        '/api/job/delete?' + q, gone));
  return b;
}

async function loadJobs() {
  const {queue, state, cursors, limit} = selected;
  const cursor = cursors[cursors.length - 1];
  const sec = document.getElementById('jobs-section');
  sec.hidden = false;
  document.getElementById('jobs-queue').textContent = queue;
  await loadFlow(queue);
  const nav = document.getElementById('states');
  nav.replaceChildren(...STATES.map(s => el('button', {
    class: s === state ? 'on' : '', onclick: () => selectQueue(queue, s)}, s)));
  const actions = document.getElementById('jobs-actions');
  actions.replaceChildren();
  const qs = 'queue=' + encodeURIComponent(queue);
  if (state === 'dead' && !readOnly)
    actions.append(
      actionButton('retry', 'Retry all dead',
                   `Retry every dead job of ${queue}?`, '/api/retry?' + qs),
      actionButton('purge', 'Purge dead',
                   `Delete every dead job of ${queue}? This cannot be undone.`,
                   '/api/purge?state=dead&' + qs));
  if (state === 'completed' && !readOnly)
    actions.append(actionButton('purge', 'Purge completed',
      `Delete every kept completed job of ${queue}?`,
      '/api/purge?state=completed&' + qs));
  let r;
  try {
    r = await api(`/api/jobs?${qs}&state=${state}&cursor=${cursor}&limit=${limit}`);
  } catch (e) { return; }
  const body = document.querySelector('#jobs tbody');
  const more = document.getElementById('jobs-more');
  body.replaceChildren();
  if (!r.ok) {
    if (r.status >= 500) {
      unknownRow(body, 7, 'the jobs');
      more.textContent = `unknown number of ${state} jobs`;
    } else {
      showError(errText(r.body));
    }
    return;
  }
  const page = r.body;
  // A partitioned queue's pages walk its partitions in turn: an empty page
  // where a partition holds none of these jobs is passed over (its next
  // cursor starts a later partition that has some, so this ends).
  if (page.jobs.length === 0 && page.next_cursor &&
      page.next_cursor !== cursor) {
    selected.cursors[selected.cursors.length - 1] = page.next_cursor;
    setHash();
    return loadJobs();
  }
  for (const j of page.jobs) {
    const row = el('tr', {'data-job': j.id,
                          class: jobSel && jobSel.id === j.id ? 'sel' : ''},
      el('td', {}, el('button', {class: 'link', 'data-open': j.id,
                                 onclick: () => openJob(queue, j.id)}, j.id)),
      el('td', {}, j.type),
      el('td', {class: 'num'}, `${j.attempts}/${j.max_attempts}`),
      el('td', {}, fmtTime(j.time_ms)),
      el('td', {class: 'data', title: j.payload}, j.payload),
      el('td', {class: 'err', title: j.last_error}, j.last_error),
      el('td', {}, ...jobButtons(queue, j.id, state, false)));
    body.append(row);
  }
  more.textContent = `${page.jobs.length} of ${page.total} ${state} job(s)` +
    (cursor ? ` (from cursor ${cursor})` : '') +
    (state === 'completed' && page.total === 0
      ? ' (completion history is off unless keep_completed is set)' : '');
  more.dataset.total = page.total;
  more.dataset.next = page.next_cursor;
  const prev = document.getElementById('page-prev');
  const next = document.getElementById('page-next');
  const firstB = document.getElementById('page-first');
  prev.disabled = firstB.disabled = cursors.length < 2;
  next.disabled = !page.next_cursor;
  next.onclick = () => {
    selected.cursors.push(page.next_cursor); setHash(); loadJobs();
  };
  prev.onclick = () => { selected.cursors.pop(); setHash(); loadJobs(); };
  firstB.onclick = () => { selected.cursors = [0]; setHash(); loadJobs(); };
  testClick();
}

function closeJob() {
  jobSel = null;
  document.getElementById('job-view').hidden = true;
  setHash();
}

function openJob(queue, id) {
  jobSel = {queue, id};
  setHash();
  document.querySelectorAll('#jobs tr').forEach(tr =>
    tr.classList.toggle('sel', tr.dataset.job === id));
  loadJob(queue, id);
}

// Text as it is, or pretty-printed when it is JSON (as text, never markup).
function pretty(s) {
  if (s === null || s === undefined) return null;
  const t = String(s).trim();
  if (t.startsWith('{') || t.startsWith('[')) {
    try { return {json: true, text: JSON.stringify(JSON.parse(t), null, 2)}; }
    catch (e) { /* not JSON */ }
  }
  return {json: false, text: String(s)};
}

function putBlob(id, s, none) {
  const pre = document.getElementById(id);
  const p = pretty(s);
  pre.textContent = p ? p.text : none;
  pre.dataset.json = p && p.json ? '1' : '0';
  pre.classList.toggle('muted', !p);
}

// The errors of job `j` (null: none to show): a list item per failed
// attempt of its history (attempt, time, the error as text), oldest
// first; below it the last error in full when the history does not end
// with it (an error cut to 1 KiB in the history, a kill's reason, a
// server whose history is empty), or what it is when there is none.
function putErrors(j) {
  const list = document.getElementById('job-errors');
  const errs = j && Array.isArray(j.errors) ? j.errors : [];
  list.replaceChildren(...errs.map(e => el('li', {'data-attempt': e.attempt},
    el('span', {class: 'when'}, `attempt ${e.attempt} at ${isoShort(e.time)}`),
    el('pre', {class: 'blob'}, e.error))));
  list.hidden = errs.length === 0;
  const pre = document.getElementById('job-error');
  const last = errs.length ? errs[errs.length - 1].error : null;
  const full = j && j.last_error && j.last_error !== last ? j.last_error : null;
  putBlob('job-error', full && errs.length ? `last error, in full:\n${full}` : full,
          !j ? '' : errs.length ? '' : j.attempts > 0 ? 'no error recorded'
                                                      : 'not run yet');
  pre.hidden = errs.length > 0 && !full;
}

// One job (/api/job: fleet queue get): every field, its payload and
// result (pretty when JSON), its attempt history (the last failed attempts,
// oldest first, each with its error), and a flow parent's children.
async function loadJob(queue, id) {
  const view = document.getElementById('job-view');
  const fields = document.getElementById('job-fields');
  const table = document.getElementById('children');
  const body = table.querySelector('tbody');
  view.hidden = false;
  document.getElementById('job-id').textContent = id;
  let r;
  try {
    r = await api(`/api/job?queue=${encodeURIComponent(queue)}` +
                  `&id=${encodeURIComponent(id)}`);
  } catch (e) { return; }
  fields.replaceChildren();
  body.replaceChildren();
  const actions = document.getElementById('job-actions');
  actions.replaceChildren();
  if (!r.ok) {
    const what = r.status === 404 ? `no job ${id} in ${queue}`
               : r.status >= 500 ? 'unknown: the job could not be read'
               : errText(r.body);
    fields.append(el('dt', {}, 'State'),
                  el('dd', {class: r.status >= 500 ? 'unknown' : '',
                            'data-state': r.status === 404 ? 'none' : 'unknown'}, what));
    putBlob('job-payload', null, '');
    putBlob('job-result', null, '');
    putErrors(null);
    table.hidden = true;
    return;
  }
  const j = r.body;
  const f = (label, value, attrs) => {
    if (value === null || value === undefined || value === '') return;
    fields.append(el('dt', {}, label), el('dd', attrs || {}, value));
  };
  f('Queue', queue);
  f('State', j.state, {'data-state': j.state});
  f('Type', j.type);
  f('Attempts', `${j.attempts} of ${j.max_attempts}`, {'data-attempts': j.attempts});
  f('Priority', j.priority);
  f('Group', j.group);
  f('Created', fmtTime(j.created_ms));
  f(j.state === 'delayed' ? 'Runs at' : 'Run at', fmtTime(j.run_at_ms));
  f('Finished', fmtTime(j.finished_ms));
  if (j.progress !== null && j.progress !== undefined)
    f('Progress', `${j.progress}%` + (j.progress_data ? ` (${j.progress_data})` : ''),
      {'data-progress': j.progress});
  if (j.children) f('Children waiting', j.children_waiting);
  putBlob('job-payload', j.payload, '(empty)');
  putBlob('job-result', j.result, 'none kept');
  putErrors(j);
  actions.append(...jobButtons(queue, id, j.state, true));
  testClick();
  table.hidden = !j.children;
  if (!j.children) return;
  for (const k of j.children)
    body.append(el('tr', {'data-child': k.id},
      el('td', {}, k.queue), el('td', {}, k.id),
      el('td', {'data-state': k.state}, k.state),
      el('td', {class: 'data', title: k.result}, k.result)));
}

function search() {
  const id = document.getElementById('job-search-id').value.trim();
  if (!id || !selected) return;
  openJob(selected.queue, id);
}

// ---------------------------------------------------------------------------
// Test hooks (only when the server runs with FLEET_DASH_TEST_HOOKS=1):
// #...&probe=1 writes what a test measures into <pre id="probe"> (the
// page's width, the right edge of everything no box clips, the
// requests sent; #...&probe=W first lays the page out W px wide);
// &click=ACTION clicks the first button with that data-action once (it
// opens its confirmation), &confirm=1 then confirms it.

const hashParams = new URLSearchParams(location.hash.slice(1));
let clicked = false;

function probe() {
  if (!hooks || !hashParams.get('probe')) return;
  const p = document.getElementById('probe');
  const de = document.documentElement;
  // The right edge of everything not inside a box that scrolls.
  let right = 0;
  const wide = [];
  const limit = parseInt(hashParams.get('probe'), 10) >= 200
    ? parseInt(hashParams.get('probe'), 10) : de.clientWidth;
  // Whether a box around `e` clips it (scrolls or hides what overflows).
  const clipped = e => {
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement)
      if (getComputedStyle(a).overflowX !== 'visible') return true;
    return false;
  };
  document.querySelectorAll('body *').forEach(e => {
    if (e.closest('[hidden]') || e.closest('svg') || clipped(e)) return;
    const r = e.getBoundingClientRect();
    if (r.width === 0) return;
    right = Math.max(right, r.right);
    if (r.right > limit + 0.5)
      wide.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : ''));
  });
  p.textContent = [
    `scrollWidth=${de.scrollWidth}`, `innerWidth=${window.innerWidth}`,
    `width=${limit}`, `right=${Math.ceil(right)}`,
    `overflow=${de.scrollWidth > window.innerWidth || wide.length ? 'yes' : 'no'}`,
    `wide=${wide.slice(0, 5).join(',')}`,
    ...requests.map(r => 'request ' + r)].join('\n');
  p.hidden = false;
}

function testClick() {
  if (!hooks || clicked || !hashParams.get('click')) return;
  const b = document.querySelector(
    `button[data-action="${CSS.escape(hashParams.get('click'))}"]`);
  if (!b) return;
  clicked = true;
  b.click();
  if (hashParams.get('confirm') === '1') document.getElementById('confirm-ok').click();
  probe();
}

// ---------------------------------------------------------------------------
// Start

// A link may open a queue's jobs: #queue=NAME&state=STATE (a page:
// &cursor=C&limit=N; one job: &job=ID), or a cron's history:
// #cron=NAMESPACE&key=KEY.
function fromHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  if (h.get('cron') && h.get('key')) selectCron(h.get('cron'), h.get('key'));
  if (h.get('queue')) {
    const lim = parseInt(h.get('limit') || '', 10);
    const cur = parseInt(h.get('cursor') || '', 10);
    selectQueue(h.get('queue'),
                STATES.includes(h.get('state')) ? h.get('state') : 'pending',
                cur > 0 ? cur : 0, lim > 0 && lim <= 1000 ? lim : PAGE);
  }
  if (h.get('queue') && h.get('job')) openJob(h.get('queue'), h.get('job'));
}

document.getElementById('confirm-ok').addEventListener('click', () => {
  const fn = onConfirm;
  closeConfirm();
  if (fn) fn();
});
document.getElementById('confirm-cancel').addEventListener('click', closeConfirm);
document.addEventListener('keydown', e => {
  if (e.key === 'Escape' && !document.getElementById('confirm').hidden) closeConfirm();
});
document.getElementById('job-search-go').addEventListener('click', search);
document.getElementById('job-search-id').addEventListener('keydown', e => {
  if (e.key === 'Enter') search();
});
document.getElementById('job-close').addEventListener('click', closeJob);

// The server's routes (/api/routes): the history and the workers are
// asked for only where the server has them.
async function loadRoutes() {
  let r;
  try { r = await api('/api/routes'); } catch (e) { return; }
  if (!r.ok || !Array.isArray(r.body)) return;
  const paths = new Set(r.body.map(x => x.path));
  if (!paths.has('/api/history')) hist.avail = false;
  if (!paths.has('/api/workers')) workers.avail = false;
}

render(JSON.parse(document.getElementById('fleet-initial').textContent));
fromHash();
loadRoutes().then(() => { drawCharts(); loadHistory(); loadWorkers(true); });
window.addEventListener('hashchange', fromHash);
window.addEventListener('resize', drawCharts);
setInterval(refresh, 2000);
