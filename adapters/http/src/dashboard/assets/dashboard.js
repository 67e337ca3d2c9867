// taskwire's task dashboard: reads the server's live feed (SSE over fetch, so that a bearer
// token can go with it), keeps every task's row, and draws the table, the counts, the chart
// and a task's detail. Plain JS, no framework, nothing loaded from elsewhere.
(function () {
  'use strict';

  const BASE = document.body.dataset.base || '';
  const TOKEN_KEY = 'taskwire.dashboard.token';
  const STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'];
  const ENDED = ['completed', 'failed', 'cancelled'];
  const LABELS = {
    working: 'working',
    input_required: 'input required',
    completed: 'completed',
    failed: 'failed',
    cancelled: 'cancelled',
  };
  /** The table shows at most this many rows (the newest that pass the filters). */
  const SHOWN = 500;
  /** The chart: buckets of this many ms, this many of them. */
  const BUCKET_MS = 10000;
  const BUCKETS = 30;
  /** Reconnecting waits this long after a stream ends, doubling up to the maximum. */
  const RETRY_MS = 1000;
  const RETRY_MAX_MS = 15000;

  const $ = (id) => document.getElementById(id);
  const rows = new Map(); // id -> row, as the feed last showed it
  const endings = new Map(); // id -> when it ended (kept after it is gone, for the chart)
  const trs = new Map(); // id -> <tr>
  const filters = { status: '', tool: '', owner: '' };
  let selected = null; // the id the detail shows
  let detail = null; // its last detail, as fetched
  let retryMs = RETRY_MS;
  let stream = null; // the AbortController of the open stream
  let dirty = false;

  // ---------------------------------------------------------------- formatting

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function badge(status) {
    return el('span', 'badge s-' + status, LABELS[status] || status);
  }

  function span(ms) {
    const s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return s + 's';
    const m = Math.floor(s / 60);
    if (m < 60) return m + 'm ' + (s % 60) + 's';
    const h = Math.floor(m / 60);
    if (h < 24) return h + 'h ' + (m % 60) + 'm';
    return Math.floor(h / 24) + 'd ' + (h % 24) + 'h';
  }

  function clock(ms) {
    const d = new Date(ms);
    const pad = (n, w) => String(n).padStart(w || 2, '0');
    return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds()) + '.' + pad(d.getMilliseconds(), 3);
  }

  function shortId(id) {
    return id.length > 13 ? id.slice(0, 8) + '…' + id.slice(-4) : id;
  }

  /** An owner as people read it: an OAuth caller `["issuer","subject","client"]` by its
   *  subject and client; anything else as it is. */
  function ownerName(owner) {
    if (owner && owner.charAt(0) === '[') {
      try {
        const parts = JSON.parse(owner);
        if (Array.isArray(parts) && parts.length === 3) return parts[1] + ' · ' + parts[2];
      } catch (_) {
        // not JSON: shown as it is
      }
    }
    return owner;
  }

  function ended(row) {
    return ENDED.includes(row.status);
  }

  function authHeaders(extra) {
    const headers = Object.assign({}, extra || {});
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = 'Bearer ' + token;
    return headers;
  }

  /** The message of an error response (the server answers JSON-RPC-style errors). */
  async function errorText(response) {
    try {
      const body = await response.json();
      if (body && body.error && body.error.message) return body.error.message;
    } catch (_) {
      // no JSON body
    }
    return 'HTTP ' + response.status;
  }

  let noticeTimer = null;
  function notice(text) {
    const box = $('notice');
    box.textContent = text;
    box.hidden = false;
    clearTimeout(noticeTimer);
    noticeTimer = setTimeout(() => { box.hidden = true; }, 5000);
  }

  function setConn(state, text) {
    document.body.dataset.conn = state;
    $('conn-text').textContent = text;
    $('signout').hidden = !sessionStorage.getItem(TOKEN_KEY);
  }

  // ---------------------------------------------------------------- the feed

  function connect() {
    if (stream) stream.abort();
    const controller = new AbortController();
    stream = controller;
    setConn('connecting', 'connecting…');
    read(controller).catch(() => {}).then(() => {
      if (stream === controller && !controller.signal.aborted) reconnect();
    });
  }

  function reconnect(after) {
    const wait = after || retryMs;
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
    setConn('error', 'reconnecting…');
    setTimeout(connect, wait);
  }

  async function read(controller) {
    const response = await fetch(BASE + '/events', {
      headers: authHeaders({ Accept: 'text/event-stream' }),
      signal: controller.signal,
      cache: 'no-store',
    });
    // A token refused, or one without the dashboard's scope (an OAuth challenge): ask for one.
    const challenged = response.status === 403 && response.headers.has('WWW-Authenticate');
    if (response.status === 401 || (challenged && sessionStorage.getItem(TOKEN_KEY))) {
      const why = await errorText(response);
      controller.abort();
      askToken(why);
      return;
    }
    if (!response.ok) {
      const why = await errorText(response);
      controller.abort();
      setConn('error', why);
      notice(why);
      reconnect(response.status === 503 ? RETRY_MAX_MS : undefined);
      return;
    }
    retryMs = RETRY_MS;
    setConn('live', 'live');
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        dispatch(block);
      }
    }
  }

  /** One SSE event block: `event:` and `data:` lines (comments are keep-alives). */
  function dispatch(block) {
    let event = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line === '' || line.charAt(0) === ':') continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length) handle(event, JSON.parse(data.join('\n')));
  }

  function handle(event, data) {
    switch (event) {
      case 'snapshot':
        rows.clear();
        for (const row of data.rows) put(row);
        if (selected) refreshDetail();
        break;
      case 'row':
        put(data);
        if (data.id === selected) refreshDetail();
        break;
      case 'asked':
      case 'answered':
        if (data.task === selected) refreshDetail();
        break;
      case 'gone':
        rows.delete(data.task);
        if (data.task === selected) showGone();
        break;
      default:
        return;
    }
    schedule();
  }

  function put(row) {
    const before = rows.get(row.id);
    rows.set(row.id, row);
    if (ended(row) && !(before && ended(before))) endings.set(row.id, { at: row.updatedAt, status: row.status });
  }

  // ---------------------------------------------------------------- sign-in

  function askToken(why) {
    setConn('signin', 'sign-in needed');
    $('signin-why').textContent = sessionStorage.getItem(TOKEN_KEY)
      ? 'The server refused the token: ' + why
      : 'This server wants a bearer token to show its tasks.';
    $('signin').hidden = false;
    $('token').focus();
  }

  $('signin-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const token = $('token').value.trim();
    if (!token) return;
    sessionStorage.setItem(TOKEN_KEY, token);
    $('token').value = '';
    $('signin').hidden = true;
    connect();
  });

  $('signout').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    connect();
  });

  // ---------------------------------------------------------------- the table

  function schedule() {
    if (dirty) return;
    dirty = true;
    requestAnimationFrame(() => {
      dirty = false;
      render();
    });
  }

  function passes(row) {
    return (!filters.status || row.status === filters.status)
      && (!filters.tool || (row.tool || '') === filters.tool)
      && (!filters.owner || row.owner === filters.owner);
  }

  function render() {
    renderCounts();
    renderFilters();
    const all = Array.from(rows.values());
    const passing = all.filter(passes).sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
    const shown = passing.slice(0, SHOWN);
    const keep = new Set(shown.map((r) => r.id));
    for (const id of trs.keys()) if (!keep.has(id)) trs.delete(id);
    $('rows').replaceChildren(...shown.map(tr));
    $('empty').hidden = shown.length > 0;
    $('empty').textContent = all.length ? 'No task passes the filters.' : 'No tasks yet.';
    $('shown').textContent = passing.length > SHOWN
      ? 'newest ' + SHOWN + ' of ' + passing.length + ' tasks'
      : passing.length + (passing.length === all.length ? '' : ' of ' + all.length) + ' tasks';
    const live = all.filter((r) => !ended(r)).length;
    document.title = 'taskwire · ' + live + ' live task' + (live === 1 ? '' : 's');
    tick();
  }

  /** The row's <tr>, made or brought up to date. */
  function tr(row) {
    let line = trs.get(row.id);
    if (!line) {
      line = el('tr');
      line.dataset.id = row.id;
      for (const cls of ['id mono', 'tool', 'owner', 'status', 'message', 'progress', 'age num', 'duration num']) {
        line.appendChild(el('td', cls));
      }
      line.addEventListener('click', () => select(row.id));
      trs.set(row.id, line);
    }
    if (line.row !== row) {
      line.row = row;
      line.dataset.status = row.status;
      const cells = line.children;
      cells[0].textContent = shortId(row.id);
      cells[0].title = row.id;
      cells[1].textContent = row.tool || '—';
      cells[2].textContent = ownerName(row.owner);
      cells[2].title = row.owner;
      cells[3].replaceChildren(badge(row.status));
      cells[4].textContent = row.message || '';
      cells[5].replaceChildren(...progress(row.progress));
    }
    line.classList.toggle('selected', row.id === selected);
    return line;
  }

  function progress(p) {
    if (!p) return [];
    if (p.total) {
      const track = el('span', 'bar-track');
      const fill = el('span', 'bar-fill');
      fill.style.width = Math.max(0, Math.min(100, (100 * p.progress) / p.total)) + '%';
      track.appendChild(fill);
      return [track, el('span', 'bar-text', p.progress + '/' + p.total)];
    }
    return [el('span', 'bar-text', String(p.progress))];
  }

  /** The clocks: each shown row's age and duration, and the chart. */
  function tick() {
    const now = Date.now();
    for (const line of $('rows').children) {
      const row = line.row;
      const cells = line.children;
      cells[6].textContent = span(now - row.createdAt);
      const live = !ended(row);
      cells[7].textContent = span((live ? now : row.updatedAt) - row.createdAt);
      cells[7].classList.toggle('live', live);
    }
    renderChart(now);
  }

  function renderCounts() {
    const counts = Object.fromEntries(STATUSES.map((s) => [s, 0]));
    for (const row of rows.values()) counts[row.status] = (counts[row.status] || 0) + 1;
    const cards = [['', 'all', rows.size]].concat(STATUSES.map((s) => [s, s, counts[s]]));
    $('counts').replaceChildren(...cards.map(([filter, cls, n]) => {
      const card = el('button', 'count s-' + cls + (filters.status === filter ? ' on' : ''));
      card.type = 'button';
      card.dataset.status = cls;
      card.appendChild(el('div', 'label', filter ? LABELS[filter] : 'all tasks'));
      card.appendChild(el('div', 'n', n));
      card.addEventListener('click', () => {
        filters.status = filters.status === filter ? '' : filter;
        $('f-status').value = filters.status;
        schedule();
      });
      return card;
    }));
  }

  function fillSelect(select, values, label, current) {
    const wanted = [''].concat(values);
    const have = Array.from(select.options).map((o) => o.value);
    if (have.join('\u0000') !== wanted.join('\u0000')) {
      select.replaceChildren(...wanted.map((v) => {
        const option = el('option', null, v ? label(v) : 'all');
        option.value = v;
        return option;
      }));
    }
    select.value = current;
  }

  function renderFilters() {
    const tools = new Set();
    const owners = new Set();
    for (const row of rows.values()) {
      tools.add(row.tool || '');
      owners.add(row.owner);
    }
    if (filters.tool) tools.add(filters.tool);
    if (filters.owner) owners.add(filters.owner);
    tools.delete('');
    fillSelect($('f-status'), STATUSES, (s) => LABELS[s], filters.status);
    fillSelect($('f-tool'), Array.from(tools).sort(), (t) => t, filters.tool);
    fillSelect($('f-owner'), Array.from(owners).sort(), ownerName, filters.owner);
  }

  for (const [key, id] of [['status', 'f-status'], ['tool', 'f-tool'], ['owner', 'f-owner']]) {
    $(id).addEventListener('change', (e) => {
      filters[key] = e.target.value;
      schedule();
    });
  }

  // ---------------------------------------------------------------- the chart

  function svg(tag, attrs, text) {
    const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function renderChart(now) {
    const end = Math.ceil(now / BUCKET_MS) * BUCKET_MS;
    const start = end - BUCKETS * BUCKET_MS;
    const buckets = Array.from({ length: BUCKETS }, () => ({ completed: 0, failed: 0, cancelled: 0 }));
    for (const [id, e] of endings) {
      if (e.at < start) {
        if (!rows.has(id)) endings.delete(id);
        continue;
      }
      const i = Math.min(BUCKETS - 1, Math.floor((e.at - start) / BUCKET_MS));
      buckets[i][e.status] += 1;
    }
    const most = Math.max(1, ...buckets.map((b) => b.completed + b.failed + b.cancelled));
    const left = 18;
    const width = 300 - left;
    const top = 6;
    const height = 66;
    const slot = width / BUCKETS;
    const parts = [
      svg('line', { class: 'axis', x1: left, y1: top + height, x2: 300, y2: top + height }),
      svg('text', { x: 0, y: top + 6 }, String(most)),
      svg('text', { x: 0, y: top + height }, '0'),
      svg('text', { x: left, y: 84 }, '−5 min'),
      svg('text', { x: 300, y: 84, 'text-anchor': 'end' }, 'now'),
    ];
    buckets.forEach((b, i) => {
      let y = top + height;
      const total = b.completed + b.failed + b.cancelled;
      for (const status of ENDED) {
        if (!b[status]) continue;
        const h = (height * b[status]) / most;
        y -= h;
        const bar = svg('rect', { class: 'b-' + status, x: left + i * slot + 1, y, width: slot - 2, height: h, rx: 1 });
        bar.appendChild(svg('title', {}, total + ' ended (' + b.completed + ' completed, ' + b.failed + ' failed, ' + b.cancelled + ' cancelled)'));
        parts.push(bar);
      }
    });
    $('chart').replaceChildren(...parts);
  }

  // ---------------------------------------------------------------- the detail

  function select(id) {
    selected = id;
    detail = null;
    $('detail').hidden = false;
    document.body.classList.add('detail-open');
    $('d-id').textContent = id;
    $('d-gone').hidden = true;
    resetCancel();
    drawDetail();
    refreshDetail();
    schedule();
  }

  $('d-close').addEventListener('click', () => {
    selected = null;
    $('detail').hidden = true;
    document.body.classList.remove('detail-open');
    schedule();
  });

  let fetching = false;
  let again = false;
  /** Fetches the selected task's detail (one request at a time; a change meanwhile asks
   *  again once it is answered). */
  async function refreshDetail() {
    if (fetching) {
      again = true;
      return;
    }
    fetching = true;
    const id = selected;
    try {
      const response = await fetch(BASE + '/tasks/' + encodeURIComponent(id), { headers: authHeaders(), cache: 'no-store' });
      if (id !== selected) return;
      if (response.status === 404) showGone();
      else if (response.status === 401) askToken(await errorText(response));
      else if (!response.ok) notice(await errorText(response));
      else {
        detail = await response.json();
        drawDetail();
      }
    } catch (e) {
      notice('The detail could not be read: ' + e);
    } finally {
      fetching = false;
      if (again) {
        again = false;
        if (selected) refreshDetail();
      }
    }
  }

  function showGone() {
    $('d-gone').hidden = false;
    $('d-cancel').hidden = true;
  }

  function fact(list, name, value) {
    if (value === undefined || value === null || value === '') return;
    list.appendChild(el('dt', null, name));
    list.appendChild(el('dd', null, value));
  }

  function drawDetail() {
    const row = rows.get(selected) || (detail && detail.row);
    const task = detail && detail.task;
    const status = row ? row.status : task ? task.info.status : null;
    $('d-status').replaceWith(Object.assign(status ? badge(status) : el('span'), { id: 'd-status' }));
    $('d-message').textContent = row ? row.message || '' : task ? task.info.status_message || '' : '';
    const facts = $('d-facts');
    facts.replaceChildren();
    if (row) {
      fact(facts, 'Tool', row.tool);
      fact(facts, 'Owner', row.owner);
      fact(facts, 'Era', row.era);
      fact(facts, 'Created', new Date(row.createdAt).toLocaleString());
      fact(facts, 'Updated', new Date(row.updatedAt).toLocaleString());
      fact(facts, 'Runs here', row.runsHere ? 'yes' : 'no (another process runs its work)');
    }
    if (task) {
      if (task.info.ttl_ms) fact(facts, 'Kept for', span(task.info.ttl_ms) + ' from creation');
      if (task.request && task.request.attempt) fact(facts, 'Attempt', task.request.attempt);
    }
    $('d-progress').replaceChildren(...(row && row.progress ? [el('span', 'dim', 'Progress '), ...progress(row.progress)] : []));
    drawHistory();
    const live = status && !ENDED.includes(status);
    const inputs = live && task && task.inputs && task.inputs.length ? task.inputs : null;
    $('d-inputs-wrap').hidden = !inputs;
    $('d-inputs').textContent = inputs ? JSON.stringify(inputs, null, 2) : '';
    drawOutcome(task && task.outcome);
    const args = task && task.request && task.request.arguments;
    $('d-args-wrap').hidden = args === undefined || args === null;
    $('d-args').textContent = args === undefined ? '' : JSON.stringify(args, null, 2);
    $('d-cancel').hidden = !live || !$('d-gone').hidden;
  }

  function drawHistory() {
    const list = $('d-history');
    const history = detail && detail.history;
    if (!history) {
      list.replaceChildren(el('li', 'dim', 'loading…'));
      return;
    }
    const created = detail.row ? detail.row.createdAt : detail.task.info.created_at;
    const items = history.steps.map((step) => {
      const item = el('li', 'k-' + step.kind + (step.status ? ' s-' + step.status : ''));
      item.dataset.kind = step.kind;
      const when = el('span', 'when', clock(step.at) + '  +' + span(step.at - created));
      const what = el('div', 'what');
      if (step.kind === 'status') {
        item.dataset.status = step.status;
        what.append(badge(step.status), ' ', step.message || '');
      } else if (step.kind === 'asked') {
        what.textContent = 'asked its requestor: ' + step.method;
      } else {
        what.textContent = step.accepted ? 'the requestor answered' : 'the requestor answered with an error';
      }
      item.append(when, what);
      return item;
    });
    if (history.dropped) items.unshift(el('li', 'dim', history.dropped + ' older steps not kept'));
    list.replaceChildren(...items);
  }

  function drawOutcome(outcome) {
    const box = $('d-outcome');
    $('d-outcome-wrap').hidden = !outcome;
    if (!outcome) {
      box.replaceChildren();
      return;
    }
    const parts = [];
    if (outcome.result) {
      const value = outcome.result.value || {};
      const texts = (value.content || []).filter((c) => c.type === 'text').map((c) => c.text);
      const error = outcome.result.is_error;
      if (texts.length) parts.push(el('div', 'outcome-text' + (error ? ' error' : ''), texts.join('\n')));
      parts.push(el('pre', null, JSON.stringify(value, null, 2)));
    } else if (outcome.error) {
      parts.push(el('div', 'outcome-text error', outcome.error.message + ' (' + outcome.error.code + ')'));
      if (outcome.error.data !== undefined) parts.push(el('pre', null, JSON.stringify(outcome.error.data, null, 2)));
    }
    box.replaceChildren(...parts);
  }

  // ---------------------------------------------------------------- cancel

  let confirmTimer = null;
  function resetCancel() {
    const button = $('d-cancel');
    button.classList.remove('confirm');
    button.textContent = 'Cancel task';
    button.disabled = false;
    clearTimeout(confirmTimer);
  }

  $('d-cancel').addEventListener('click', async () => {
    const button = $('d-cancel');
    if (!button.classList.contains('confirm')) {
      button.classList.add('confirm');
      button.textContent = 'Click again to cancel';
      confirmTimer = setTimeout(resetCancel, 4000);
      return;
    }
    clearTimeout(confirmTimer);
    button.disabled = true;
    button.textContent = 'Cancelling…';
    const id = selected;
    try {
      const response = await fetch(BASE + '/tasks/' + encodeURIComponent(id) + '/cancel', {
        method: 'POST',
        headers: authHeaders({ 'X-Taskwire-Dashboard': 'cancel' }),
      });
      if (response.status === 401) askToken(await errorText(response));
      else if (!response.ok) notice('Not cancelled: ' + (await errorText(response)));
      else notice('Cancelled ' + shortId(id));
    } catch (e) {
      notice('Not cancelled: ' + e);
    }
    resetCancel();
    if (id === selected) refreshDetail();
  });

  // ---------------------------------------------------------------- start

  setInterval(tick, 1000);
  render();
  connect();
})();
