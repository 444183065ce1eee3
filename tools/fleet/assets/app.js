// app.js -- the fleet dashboard: renders the overview (inlined in the page,
// then fetched from /api/overview every 2 s), a chart of completed jobs per
// second drawn in SVG from the counters it has seen, the jobs of a queue by
// state (/api/jobs) with retry and cancel buttons (POST; a running job's
// cancel asks its worker to stop it), one job (/api/job: its result and
// progress, a flow parent with its children, docs/queue.md "Flows"), and
// its flow
// limits and groups (/api/queue), locks, pools,
// crons (with the dispatch log of one, /api/cron-history) and warm pools.
// No external library, no inline script or style: the page's policy
// (Content-Security-Policy) allows only this file and style.css, and the
// first overview comes as JSON data (<script type="application/json">).
// When the server is read-only (the overview's read_only), no control
// that changes anything is drawn: each such button has a data-action.
'use strict';

// The job states, as /api/jobs names them; a queue's count of each is its
// member with "_" for "-" (waiting-children: flow parents).
const STATES = ['pending', 'delayed', 'running', 'completed', 'dead',
                'waiting-children'];
const countOf = (q, s) => q[s.replace('-', '_')];
const COLORS = ['#1f6feb', '#d9480f', '#2f9e44', '#9c36b5', '#0c8599',
                '#e8590c', '#5c940d', '#c2255c'];
const HISTORY = 90; // the server keeps 90 samples, one per 2 s
let selected = null; // {queue, state}
let cronSel = null;  // {ns, key}
let readOnly = true; // until the server says otherwise

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

function fmtTime(ms) {
  if (!ms) return '';
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

function showError(text) {
  const p = document.getElementById('error');
  p.textContent = text || '';
  p.hidden = !text;
}

// The rate of `queue` (completed jobs per second) between each two of the
// server's samples (the overview's history: {t: ms, c: {queue: completed}}).
function rates(hist, queue) {
  const out = [];
  for (let k = 1; k < hist.length; k++) {
    const a = hist[k - 1], b = hist[k];
    if (a.c[queue] === undefined || b.c[queue] === undefined) continue;
    out.push(Math.max(0, (b.c[queue] - a.c[queue]) * 1000 / Math.max(1, b.t - a.t)));
  }
  return out;
}

function drawChart(queues, hist) {
  const svg = document.getElementById('chart');
  const legend = document.getElementById('chart-legend');
  const W = 800, H = 160, NS = 'http://www.w3.org/2000/svg';
  svg.replaceChildren();
  legend.replaceChildren();
  const series = queues.map((q, i) => ({name: q.queue,
    color: COLORS[i % COLORS.length], pts: rates(hist, q.queue)}));
  let max = 1;
  for (const s of series) for (const v of s.pts) max = Math.max(max, v);
  for (let g = 0; g <= 4; g++) {
    const y = H - 10 - (H - 20) * g / 4;
    const line = document.createElementNS(NS, 'line');
    line.setAttribute('x1', 40); line.setAttribute('x2', W);
    line.setAttribute('y1', y); line.setAttribute('y2', y);
    line.setAttribute('stroke', '#e3e5ea');
    svg.append(line);
    const t = document.createElementNS(NS, 'text');
    t.setAttribute('x', 2); t.setAttribute('y', y + 4);
    t.setAttribute('font-size', 11); t.setAttribute('fill', '#778');
    t.textContent = (max * g / 4).toFixed(max < 4 ? 2 : 0);
    svg.append(t);
  }
  for (const s of series) {
    if (s.pts.length > 0) {
      const step = (W - 40) / Math.max(1, HISTORY - 1);
      const x0 = W - step * (s.pts.length - 1);
      const d = s.pts.map((v, k) =>
        (k ? 'L' : 'M') + (x0 + k * step).toFixed(1) + ' ' +
        (H - 10 - (H - 20) * v / max).toFixed(1)).join(' ');
      const path = document.createElementNS(NS, 'path');
      path.setAttribute('d', d);
      path.setAttribute('fill', 'none');
      path.setAttribute('stroke', s.color);
      path.setAttribute('stroke-width', 2);
      path.setAttribute('data-series', s.name);
      svg.append(path);
    }
    const swatch = el('span', {class: 'swatch'});
    swatch.style.background = s.color; // CSSOM: allowed by the policy
    legend.append(el('span', {}, swatch, s.name));
  }
  legend.append(el('span', {class: 'muted'}, 'completed jobs per second'));
}

function renderQueues(queues, hist) {
  const body = document.querySelector('#queues tbody');
  body.replaceChildren();
  if (queues.length === 0)
    body.append(el('tr', {}, el('td', {colspan: 10, class: 'muted'},
                                'no queue under this prefix')));
  for (const q of queues) {
    const tr = el('tr', {'data-queue': q.queue,
                         class: selected && selected.queue === q.queue ? 'sel' : ''});
    tr.append(el('td', {class: 'q-name'}, q.queue));
    for (const s of STATES) {
      const td = el('td', {class: 'num' + (s === 'dead' && q.dead_kept ? ' dead' : ''),
                           'data-state': s, 'data-count': countOf(q, s)});
      td.append(el('a', {href: '#', onclick: (e) => {
        e.preventDefault(); selectQueue(q.queue, s);
      }}, countOf(q, s)));
      tr.append(td);
    }
    tr.append(el('td', {class: q.paused ? 'paused' : ''},
                 q.paused ? 'paused' : 'active'));
    const r = rates(hist, q.queue);
    tr.append(el('td', {class: 'num'}, r.length ? r[r.length - 1].toFixed(1) : '-'));
    const action = q.paused ? 'resume' : 'pause';
    tr.append(el('td', {}, readOnly ? '' : el('button', {
      'data-action': action,
      onclick: () => post(`/api/${action}?queue=` + encodeURIComponent(q.queue))
    }, q.paused ? 'Resume' : 'Pause')));
    body.append(tr);
  }
}

function renderLocks(locks) {
  const body = document.querySelector('#locks tbody');
  body.replaceChildren();
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
         `worker(s), ${p.job_count} job(s)`), t));
  }
}

// An ISO time from the API ("2026-...Z") shown as "2026-... " UTC, or '-'.
function isoShort(s) {
  return s ? s.replace('T', ' ').replace('Z', '') : '-';
}

function renderCrons(spaces) {
  const body = document.querySelector('#crons tbody');
  body.replaceChildren();
  let n = 0;
  for (const sp of spaces || []) {
    for (const d of sp.definitions) {
      n++;
      body.append(el('tr', {'data-cron': sp.namespace + '/' + d.key,
                            class: cronSel && cronSel.ns === sp.namespace &&
                                   cronSel.key === d.key ? 'sel' : ''},
        el('td', {}, sp.namespace), el('td', {}, d.key),
        el('td', {class: 'expr'}, d.expr), el('td', {}, d.tz),
        el('td', {class: d.enabled ? '' : 'paused'},
           d.enabled ? 'yes' : 'disabled'),
        el('td', {'data-next': d.next_due || ''}, isoShort(d.next_due)),
        el('td', {'data-last': d.last_fired || ''}, isoShort(d.last_fired)),
        el('td', {}, d.queue || ''),
        el('td', {}, el('button', {onclick: () => selectCron(sp.namespace, d.key)},
                        'History'))));
    }
  }
  if (n === 0)
    body.append(el('tr', {}, el('td', {colspan: 9, class: 'muted'}, 'no cron')));
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
  const r = await fetch(`/api/cron-history?ns=${encodeURIComponent(ns)}&key=${encodeURIComponent(key)}`);
  const h = await r.json();
  const body = document.querySelector('#cron-history tbody');
  body.replaceChildren();
  if (!r.ok) { showError(`${h.error}: ${h.detail}`); return; }
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
  if (!pools || pools.length === 0)
    body.append(el('tr', {}, el('td', {colspan: 11, class: 'muted'},
                                'no warm pool')));
  for (const p of pools || []) {
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

function render(ov) {
  if (!ov) return;
  readOnly = ov.read_only !== false;
  document.getElementById('mode').textContent = readOnly ? 'read-only' : '';
  document.getElementById('backend').textContent =
    `${ov.url} \u00b7 prefix ${ov.prefix}`;
  document.getElementById('updated').textContent =
    'updated ' + new Date().toLocaleTimeString();
  const hist = ov.history || [];
  renderQueues(ov.queues, hist);
  drawChart(ov.queues, hist);
  renderLocks(ov.locks);
  renderPools(ov.pools);
  renderCrons(ov.crons);
  renderWarmpools(ov.warmpools);
  showError(ov.error ? 'some data could not be read: ' + ov.error : '');
}

async function refresh() {
  try {
    const r = await fetch('/api/overview');
    if (r.status === 401) {
      showError('the dashboard asks for its token: open /?token=TOKEN');
      return;
    }
    render(await r.json());
    if (selected) await loadJobs();
    if (cronSel) await loadCronHistory();
  } catch (e) {
    showError('cannot reach the dashboard server: ' + e);
  }
}

async function post(url) {
  try {
    const r = await fetch(url, {method: 'POST', headers: {'X-Fleet-Dash': '1'}});
    const j = await r.json();
    if (!r.ok) showError(`${j.error}: ${j.detail}`);
    else showError('');
  } catch (e) {
    showError(String(e));
  }
  refresh();
}

function selectQueue(queue, state) {
  selected = {queue, state};
  document.getElementById('job-view').hidden = true;
  history.replaceState(null, '', `#queue=${encodeURIComponent(queue)}&state=${state}`);
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
  const r = await fetch(`/api/queue?queue=${encodeURIComponent(queue)}`);
  const s = await r.json();
  const p = document.getElementById('flow-limits');
  const table = document.getElementById('groups');
  const body = table.querySelector('tbody');
  const more = document.getElementById('groups-more');
  p.replaceChildren();
  body.replaceChildren();
  more.textContent = '';
  if (!r.ok) { showError(`${s.error}: ${s.detail}`); return; }
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

async function loadJobs() {
  const {queue, state} = selected;
  const sec = document.getElementById('jobs-section');
  sec.hidden = false;
  document.getElementById('jobs-queue').textContent = queue;
  await loadFlow(queue);
  const nav = document.getElementById('states');
  nav.replaceChildren(...STATES.map(s => el('button', {
    class: s === state ? 'on' : '', onclick: () => selectQueue(queue, s)}, s)));
  const actions = document.getElementById('jobs-actions');
  actions.replaceChildren();
  if (state === 'dead' && !readOnly)
    actions.append(el('button', {'data-action': 'retry', onclick: () =>
      post('/api/retry?queue=' + encodeURIComponent(queue))}, 'Retry all dead'));
  const r = await fetch(`/api/jobs?queue=${encodeURIComponent(queue)}&state=${state}`);
  const page = await r.json();
  const body = document.querySelector('#jobs tbody');
  body.replaceChildren();
  if (!r.ok) { showError(`${page.error}: ${page.detail}`); return; }
  for (const j of page.jobs) {
    const q = `queue=${encodeURIComponent(queue)}&id=${encodeURIComponent(j.id)}`;
    const btn = readOnly ? ''
      : state === 'dead'
        ? el('button', {'data-action': 'retry',
                        onclick: () => post('/api/retry?' + q)}, 'Retry')
        : (state === 'pending' || state === 'delayed' || state === 'running' ||
           state === 'waiting-children')
          ? el('button', {'data-action': 'cancel',
                          onclick: () => post('/api/cancel?' + q)}, 'Cancel')
          : '';
    const row = el('tr', {'data-job': j.id},
      el('td', {}, el('a', {href: `#queue=${encodeURIComponent(queue)}` +
                              `&state=${state}&job=${encodeURIComponent(j.id)}`},
                      j.id)),
      el('td', {}, j.type),
      el('td', {class: 'num'}, `${j.attempts}/${j.max_attempts}`),
      el('td', {}, fmtTime(j.time_ms)),
      el('td', {class: 'data', title: j.payload}, j.payload),
      el('td', {class: 'err', title: j.last_error}, j.last_error),
      el('td', {}, btn));
    body.append(row);
  }
  document.getElementById('jobs-more').textContent =
    `${page.jobs.length} of ${page.total} ${state} job(s)` +
    (state === 'completed' && page.total === 0
      ? ' (completion history is off unless keep_completed is set)' : '');
}

// One job (/api/job: fleet queue get): its state, type and attempts, its
// last progress and result, and, for a flow's parent, its children with
// their states and results.
async function loadJob(queue, id) {
  const view = document.getElementById('job-view');
  const info = document.getElementById('job-info');
  const table = document.getElementById('children');
  const body = table.querySelector('tbody');
  view.hidden = false;
  document.getElementById('job-id').textContent = id;
  info.replaceChildren();
  body.replaceChildren();
  const r = await fetch(`/api/job?queue=${encodeURIComponent(queue)}` +
                        `&id=${encodeURIComponent(id)}`);
  const j = await r.json();
  if (!r.ok) { showError(`${j.error}: ${j.detail}`); return; }
  info.append(el('span', {'data-state': j.state}, j.state),
              ` \u00b7 ${j.type} \u00b7 attempts ${j.attempts}/${j.max_attempts}`);
  // Its last progress report, and its result while it is kept.
  if (j.progress !== null && j.progress !== undefined)
    info.append(el('span', {'data-progress': j.progress},
      ` \u00b7 progress ${j.progress}%` +
      (j.progress_data ? ` (${j.progress_data})` : '')));
  if (j.result !== null && j.result !== undefined)
    info.append(` \u00b7 result: `,
                el('span', {class: 'data', 'data-result': ''}, j.result));
  if (j.finished_ms) info.append(` \u00b7 finished ${fmtTime(j.finished_ms)}`);
  table.hidden = !j.children;
  if (!j.children) return;
  info.append(` \u00b7 children waiting: ${j.children_waiting}`);
  for (const k of j.children)
    body.append(el('tr', {'data-child': k.id},
      el('td', {}, k.queue), el('td', {}, k.id),
      el('td', {'data-state': k.state}, k.state),
      el('td', {class: 'data', title: k.result}, k.result)));
}

// A link may open a queue's jobs: #queue=NAME&state=STATE (and one job:
// &job=ID), or a cron's history: #cron=NAMESPACE&key=KEY.
function fromHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  if (h.get('cron') && h.get('key')) selectCron(h.get('cron'), h.get('key'));
  if (h.get('queue')) selectQueue(h.get('queue'), STATES.includes(h.get('state'))
                                  ? h.get('state') : 'pending');
  if (h.get('queue') && h.get('job')) loadJob(h.get('queue'), h.get('job'));
}

render(JSON.parse(document.getElementById('fleet-initial').textContent));
fromHash();
window.addEventListener('hashchange', fromHash);
setInterval(refresh, 2000);
