// irc report: stages, pictures, IR text, remarks, search and diff.
// Everything it shows is in the page's JSON block; nothing is fetched.
(function () {
  'use strict';
  window.__ircErrors = [];
  window.addEventListener('error', function (e) { window.__ircErrors.push(String(e.message)); });

  var DATA = JSON.parse(document.getElementById('irc-data').textContent);
  var STAGES = DATA.stages;
  var STATUS = ['added', 'moved', 'split', 'changed'];
  var S = { stage: 0, views: {}, zoom: {}, sel: null, query: '', hits: [], hit: -1, rem: null };

  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) { for (var k in attrs) { if (attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, attrs[k]); } }
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }

  // -- node tables, built once per stage ----------------------------------------
  var TABLES = {};
  function nodeKey(g, n) { return g + '\u0000' + n; }
  function tables(i) {
    if (TABLES[i]) return TABLES[i];
    var t = { list: [], byKey: {}, byLine: {}, byElem: {} };
    STAGES[i].nodes.forEach(function (a) {
      var node = { g: a[0], n: a[1], op: a[2], line: a[3], types: a[4], status: a[5], lin: a[6],
                   sig: a[7], path: a[8], column: a[9], loc: a[10], stage: i };
      t.list.push(node);
      t.byKey[nodeKey(node.g, node.n)] = node;
      t.byLine[node.line] = node;
      node.path.forEach(function (p) {
        var k = p[0] + '\u0000' + p[1];
        (t.byElem[k] = t.byElem[k] || []).push(node);
      });
    });
    TABLES[i] = t;
    return t;
  }
  function elementIn(node, viewKey) {
    for (var j = 0; j < node.path.length; j++) { if (node.path[j][0] === viewKey) return node.path[j][1]; }
    return null;
  }

  // -- stages ---------------------------------------------------------------------
  function stageLabel(st) { return String(st.index).padStart(2, '0') + ' ' + st.pass; }
  function countsText(st) {
    var c = st.counts || {}, parts = [];
    STATUS.concat(['removed']).forEach(function (k) { if (c[k]) parts.push(c[k] + ' ' + k); });
    return parts.join(', ');
  }
  function buildSide() {
    var list = $('stages'), sel = $('stage-select'), da = $('diff-a'), db = $('diff-b');
    STAGES.forEach(function (st, i) {
      var li = el('li', { 'data-stage': i, title: countsText(st) || 'no change drawn' });
      li.appendChild(el('span', { 'class': 'n' }, String(st.index).padStart(2, '0')));
      li.appendChild(el('span', null, st.pass));
      if (st.seconds !== null && st.seconds !== undefined) li.appendChild(el('span', { 'class': 'c' }, ms(st.seconds)));
      li.addEventListener('click', function () { showStage(i); });
      list.appendChild(li);
      [sel, da, db].forEach(function (s) { s.appendChild(el('option', { value: i }, stageLabel(st))); });
    });
    sel.addEventListener('change', function () { showStage(+sel.value); });
    var tbody = $('passes').tBodies[0];
    DATA.passes.forEach(function (p) {
      var tr = el('tr', { 'class': (p.changed ? '' : 'unchanged') + (p.stage !== null && p.stage !== undefined ? ' has-stage' : '') });
      tr.appendChild(el('td', null, String(p.index)));
      tr.appendChild(el('td', null, p.pass));
      tr.appendChild(el('td', { 'class': 'ms' }, p.seconds === null || p.seconds === undefined ? '' : (p.seconds * 1000).toFixed(2)));
      tr.appendChild(el('td', null, p.changed ? 'yes' : 'no'));
      if (p.stage !== null && p.stage !== undefined) tr.addEventListener('click', function () { showStage(p.stage); });
      p.row = tr;
      tbody.appendChild(tr);
    });
    if (!DATA.passes.length) {
      var none = el('tr');
      none.appendChild(el('td', { colspan: 4, 'class': 'hint' }, 'none'));
      tbody.appendChild(none);
    }
    var rl = $('remarks');
    $('remark-count').textContent = DATA.remarks.length ? '(' + DATA.remarks.length + ')' : '';
    DATA.remarks.forEach(function (r, k) {
      var li = el('li', { 'data-remark': k, title: r.reason || '' });
      li.appendChild(el('span', { 'class': 'kind ' + (r.kind || '') }, r.kind || ''));
      li.appendChild(el('span', null, r.message || ((r.op || '') + ' ' + (r.reason || ''))));
      var where = [r.pass, r.op, r.column ? 'col ' + r.column : null, r.source].filter(Boolean).join(' · ');
      li.appendChild(el('span', { 'class': 'src' }, where));
      li.addEventListener('click', function () { showRemark(k); });
      rl.appendChild(li);
    });
    if (!DATA.remarks.length) rl.appendChild(el('li', { 'class': 'hint' }, 'none'));
    var ol = $('onnx');
    DATA.onnx.forEach(function (o) {
      var li = el('li');
      li.appendChild(el('a', { href: o.path }, o.path));
      var info = [];
      if (o.nodes !== undefined) info.push(o.nodes + ' nodes');
      if (o.bytes !== undefined) info.push(kb(o.bytes));
      if (o.opset) info.push('opset ' + o.opset);
      if (o.inputs) info.push('in: ' + o.inputs.join(', '));
      if (o.outputs) info.push('out: ' + o.outputs.join(', '));
      if (o.error) info.push(o.error);
      if (info.length) li.appendChild(el('span', { 'class': 'info' }, info.join(' · ')));
      ol.appendChild(li);
    });
    if (!DATA.onnx.length) ol.appendChild(el('li', { 'class': 'hint' }, 'none'));
    var lg = $('legend');
    STATUS.forEach(function (s) {
      var li = el('li');
      var sw = el('span', { 'class': 'sw' });
      sw.style.borderColor = DATA.colours[s];
      li.appendChild(sw);
      li.appendChild(el('span', null, s + ' by this stage\'s pass'));
      lg.appendChild(li);
    });
  }
  function ms(s) { return s < 1 ? (s * 1000).toFixed(1) + ' ms' : s.toFixed(2) + ' s'; }
  function kb(b) { return b < 1024 ? b + ' B' : b < 1048576 ? (b / 1024).toFixed(1) + ' KiB' : (b / 1048576).toFixed(1) + ' MiB'; }

  function showStage(i, keepView) {
    i = Math.max(0, Math.min(STAGES.length - 1, i));
    var changed = i !== S.stage || !$('ir').firstChild;
    S.stage = i;
    var st = STAGES[i];
    Array.prototype.forEach.call($('stages').children, function (li, k) { li.classList.toggle('current', k === i); });
    DATA.passes.forEach(function (p) { p.row.classList.toggle('current', p.stage === i); });
    $('stage-select').value = i;
    if (changed) { renderIR(st); S.sel = null; }
    showView(keepView !== undefined ? keepView : (S.views[i] || ''));
    if (history.replaceState) history.replaceState(null, '', '#stage=' + i);
  }

  function renderIR(st) {
    var ir = $('ir'), t = tables(S.stage);
    clear(ir);
    var head = $('ir-head');
    clear(head);
    head.appendChild(el('span', null, (st.file || 'IR') + ' · ' + t.list.length + ' nodes' +
      (st.counts && countsText(st) ? ' · ' + countsText(st) : '')));
    var frag = document.createDocumentFragment();
    var texts = st.ir.split('\n');
    if (texts.length && texts[texts.length - 1] === '') texts.pop();
    texts.forEach(function (text, k) {
      var line = k + 1, node = t.byLine[line];
      var d = el('div', { 'class': 'ln' + (node && node.status ? ' st-' + node.status : ''), id: 'L' + line, 'data-line': line });
      if (node) d.setAttribute('data-node', node.g + '/' + node.n);
      d.appendChild(el('span', { 'class': 'no' }, String(line)));
      d.appendChild(document.createTextNode(text));
      frag.appendChild(d);
    });
    ir.appendChild(frag);
  }

  // -- pictures ----------------------------------------------------------------------
  function showView(key) {
    var st = STAGES[S.stage];
    if (!st.views[key]) key = '';
    S.views[S.stage] = key;
    var v = st.views[key], g = $('graph');
    clear(g);
    if (v.svg) {
      g.innerHTML = DATA.svgs[v.svg];
    } else {
      var box = el('div', { 'class': 'undrawn' }, v.error || 'not drawn');
      if (v.dot) {
        var det = el('details');
        det.appendChild(el('summary', null, 'DOT text'));
        det.appendChild(el('pre', null, DATA.dots[v.dot]));
        box.appendChild(det);
      }
      g.appendChild(box);
    }
    var notes = $('notes');
    clear(notes);
    (key === '' ? st.notes : []).forEach(function (n) { notes.appendChild(el('div', null, n)); });
    if (v.error && v.svg) notes.appendChild(el('div', null, v.error));
    buildCrumbs(st, key);
    applyZoom();
    applySearch(false);
    markRemark();
    if (S.sel && S.sel.stage === S.stage) highlightNode(S.sel, false);
  }

  function buildCrumbs(st, key) {
    var c = $('crumbs'), chain = [];
    clear(c);
    for (var k = key; k !== null && k !== undefined; k = st.views[k] ? st.views[k].parent : null) {
      chain.unshift(k);
      if (k === '') break;
    }
    chain.forEach(function (k, j) {
      if (j) c.appendChild(el('span', { 'class': 'sep' }, '›'));
      var label = k === '' ? stageLabel(st) : st.views[k].title;
      if (j === chain.length - 1) c.appendChild(el('strong', null, label));
      else {
        var a = el('a', null, label);
        a.addEventListener('click', function () { showView(k); });
        c.appendChild(a);
      }
    });
  }

  function currentSvg() { return $('graph').querySelector('svg'); }
  function naturalWidth(svg) {
    var w = svg.getAttribute('data-w');
    if (!w) {
      w = parseFloat(svg.getAttribute('width')) * (/pt$/.test(svg.getAttribute('width')) ? 4 / 3 : 1);
      svg.setAttribute('data-w', w);
    }
    return +w;
  }
  function applyZoom() {
    var svg = currentSvg();
    if (!svg) return;
    var key = S.stage + '\u0000' + (S.views[S.stage] || ''), w = naturalWidth(svg);
    if (!(key in S.zoom)) {
      var room = $('graph').clientWidth - 20;
      // fit the width, but not below half size: a long chain stays readable (scroll it)
      S.zoom[key] = room > 0 && w > room ? Math.max(room / w, 0.5) : 1;
    }
    svg.style.width = (w * S.zoom[key]) + 'px';
    svg.style.height = 'auto';
  }
  function zoom(f) {
    var key = S.stage + '\u0000' + (S.views[S.stage] || '');
    var svg = currentSvg();
    if (!svg) return;
    if (f === 0) {
      var room = $('graph').clientWidth - 20;
      S.zoom[key] = Math.max(Math.min(room / naturalWidth(svg), 4), 0.05);
    } else {
      S.zoom[key] = Math.max(Math.min((S.zoom[key] || 1) * f, 8), 0.05);
    }
    applyZoom();
  }

  // -- selection -----------------------------------------------------------------------
  function clearClass(root, cls) {
    Array.prototype.forEach.call(root.querySelectorAll('.' + cls), function (e) { e.classList.remove(cls); });
  }
  function elementById(id) {
    var e = document.getElementById(id);
    return e && $('graph').contains(e) ? e : null;
  }
  function selectNode(node, scroll) {
    if (node.stage !== S.stage) showStage(node.stage);
    S.sel = node;
    var key = S.views[S.stage] || '';
    if (!elementIn(node, key) && node.path.length) {
      showView(node.path[node.path.length - 1][0]);  // the view that draws the node itself
    } else {
      highlightNode(node, scroll !== false);
    }
  }
  function highlightNode(node, scroll) {
    clearClass(document, 'irc-sel');
    clearClass($('ir'), 'sel');
    var id = elementIn(node, S.views[S.stage] || '');
    var e = id && elementById(id);
    if (e) {
      e.classList.add('irc-sel');
      if (scroll) e.scrollIntoView({ block: 'center', inline: 'center' });
    }
    var line = $('L' + node.line);
    if (line) {
      line.classList.add('sel');
      if (scroll) line.scrollIntoView({ block: 'center' });
    }
  }

  function onGraphClick(ev) {
    var g = ev.target.closest ? ev.target.closest('g.node') : null;
    if (!g) return;
    var st = STAGES[S.stage], key = S.views[S.stage] || '', v = st.views[key];
    if (v.boxes[g.id]) { showView(v.boxes[g.id]); return; }
    if (v.stubs[g.id]) {
      var target = tables(S.stage).byKey[nodeKey(v.stubs[g.id][0], v.stubs[g.id][1])];
      if (target) selectNode(target, true);
      return;
    }
    var nodes = tables(S.stage).byElem[key + '\u0000' + g.id];
    if (nodes && nodes.length) {
      S.sel = nodes[0];
      highlightNode(nodes[0], false);
      var line = $('L' + nodes[0].line);
      if (line) line.scrollIntoView({ block: 'center' });
    }
  }
  function onIrClick(ev) {
    var d = ev.target.closest ? ev.target.closest('.ln') : null;
    if (!d) return;
    var node = tables(S.stage).byLine[+d.getAttribute('data-line')];
    if (node) selectNode(node, true);
  }

  // -- search ------------------------------------------------------------------------------
  function matches(node, q) {
    return node.op.toLowerCase().indexOf(q) >= 0 || node.n.toLowerCase().indexOf(q) >= 0 ||
      node.types.toLowerCase().indexOf(q) >= 0;
  }
  function applySearch(jump) {
    clearClass(document, 'irc-match');
    clearClass($('ir'), 'match');
    var out = $('search-count');
    clear(out);
    var q = S.query.trim().toLowerCase();
    S.hits = [];
    if (!q) return;
    var key = S.views[S.stage] || '';
    tables(S.stage).list.forEach(function (node) {
      if (!matches(node, q)) return;
      S.hits.push(node);
      var id = elementIn(node, key), e = id && elementById(id);
      if (e) e.classList.add('irc-match');
      var line = $('L' + node.line);
      if (line) line.classList.add('match');
    });
    out.appendChild(document.createTextNode(S.hits.length + ' match' + (S.hits.length === 1 ? '' : 'es') + ' here'));
    var others = [];
    STAGES.forEach(function (st, i) {
      if (i === S.stage) return;
      var k = tables(i).list.filter(function (n) { return matches(n, q); }).length;
      if (k) others.push([i, k]);
    });
    if (others.length) {
      out.appendChild(document.createTextNode(' · other stages:'));
      others.forEach(function (o) {
        var a = el('a', { title: stageLabel(STAGES[o[0]]) }, String(STAGES[o[0]].index).padStart(2, '0') + ' (' + o[1] + ')');
        a.addEventListener('click', function () { showStage(o[0]); });
        out.appendChild(a);
      });
    }
    if (jump && S.hits.length) { S.hit = 0; selectNode(S.hits[0], true); }
  }
  function nextHit(step) {
    if (!S.hits.length) return;
    S.hit = (S.hit + step + S.hits.length) % S.hits.length;
    selectNode(S.hits[S.hit], true);
  }

  // -- remarks ---------------------------------------------------------------------------
  function showRemark(k) {
    var r = DATA.remarks[k];
    S.rem = k;
    Array.prototype.forEach.call($('remarks').children, function (li, j) { li.classList.toggle('current', j === k); });
    showStage(r.stage);
    markRemark();
    var t = tables(r.stage), first = null;
    r.nodes.forEach(function (gn) { if (!first) first = t.byKey[nodeKey(gn[0], gn[1])]; });
    if (first) selectNode(first, true);
  }
  function markRemark() {
    clearClass(document, 'irc-rem');
    clearClass($('ir'), 'rem');
    if (S.rem === null) return;
    var r = DATA.remarks[S.rem];
    if (r.stage !== S.stage) return;
    var t = tables(S.stage), key = S.views[S.stage] || '';
    r.nodes.forEach(function (gn) {
      var node = t.byKey[nodeKey(gn[0], gn[1])];
      if (!node) return;
      var id = elementIn(node, key), e = id && elementById(id);
      if (e) e.classList.add('irc-rem');
      var line = $('L' + node.line);
      if (line) line.classList.add('rem');
    });
  }

  // -- diff ----------------------------------------------------------------------------------
  function diffStages(a, b) {
    var A = {}, B = {}, out = { added: [], removed: [], moved: [], changed: [] };
    tables(a).list.forEach(function (n) { A[n.lin] = n; });
    tables(b).list.forEach(function (n) { B[n.lin] = n; });
    tables(b).list.forEach(function (n) {
      var old = A[n.lin];
      if (!old) out.added.push(n);
      else if (old.g !== n.g) out.moved.push(n);
      else if (old.sig !== n.sig) out.changed.push(n);
    });
    tables(a).list.forEach(function (n) { if (!B[n.lin]) out.removed.push(n); });
    return out;
  }
  function showDiff() {
    var a = +$('diff-a').value, b = +$('diff-b').value, body = $('diff-body');
    clear(body);
    var d = diffStages(a, b);
    ['added', 'removed', 'moved', 'changed'].forEach(function (kind) {
      body.appendChild(el('h3', { 'class': kind }, kind + ' (' + d[kind].length + ')'));
      if (!d[kind].length) { body.appendChild(el('div', { 'class': 'none' }, 'none')); return; }
      var ul = el('ul');
      d[kind].forEach(function (n) {
        var text = '@' + n.g + ' %' + n.n + ' = ' + n.op + (n.loc ? '   # ' + n.loc : '');
        if (kind === 'moved') {
          var old = tables(a).list.filter(function (o) { return o.lin === n.lin; })[0];
          text += '   (from @' + old.g + ' %' + old.n + ')';
        }
        var li = el('li', null, text);
        li.addEventListener('click', function () { closeDiff(); selectNode(n, true); });
        ul.appendChild(li);
      });
      body.appendChild(ul);
    });
  }
  function openDiff() {
    $('diff-b').value = S.stage;
    $('diff-a').value = Math.max(0, S.stage - 1);
    $('diff').hidden = false;
    showDiff();
  }
  function closeDiff() { $('diff').hidden = true; }

  // -- wiring -----------------------------------------------------------------------------------
  function onKey(ev) {
    var tag = ev.target && ev.target.tagName;
    if (ev.key === 'Escape') {
      if (!$('diff').hidden) { closeDiff(); return; }
      if (tag === 'INPUT') { ev.target.blur(); return; }
      var v = STAGES[S.stage].views[S.views[S.stage] || ''];
      if (v && v.parent !== null && v.parent !== undefined) showView(v.parent);
      return;
    }
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (!$('diff').hidden) return;
    var k = ev.key;
    if (k === 'j' || k === 'ArrowRight') { showStage(S.stage + 1); ev.preventDefault(); }
    else if (k === 'k' || k === 'ArrowLeft') { showStage(S.stage - 1); ev.preventDefault(); }
    else if (k === '/') { $('search').focus(); ev.preventDefault(); }
    else if (k === '+' || k === '=') zoom(1.25);
    else if (k === '-') zoom(0.8);
    else if (k === '0') zoom(0);
    else if (k === 'n') nextHit(1);
    else if (k === 'N') nextHit(-1);
  }

  function init() {
    buildSide();
    $('prev').addEventListener('click', function () { showStage(S.stage - 1); });
    $('next').addEventListener('click', function () { showStage(S.stage + 1); });
    $('graph').addEventListener('click', onGraphClick);
    $('ir').addEventListener('click', onIrClick);
    $('zoom-in').addEventListener('click', function () { zoom(1.25); });
    $('zoom-out').addEventListener('click', function () { zoom(0.8); });
    $('zoom-fit').addEventListener('click', function () { zoom(0); });
    var search = $('search');
    search.addEventListener('input', function () { S.query = search.value; applySearch(false); });
    search.addEventListener('keydown', function (ev) {
      if (ev.key === 'Enter') { ev.preventDefault(); if (S.hit < 0) applySearch(true); else nextHit(ev.shiftKey ? -1 : 1); }
    });
    search.addEventListener('input', function () { S.hit = -1; });
    $('diff-open').addEventListener('click', openDiff);
    $('diff-close').addEventListener('click', closeDiff);
    $('diff-a').addEventListener('change', showDiff);
    $('diff-b').addEventListener('change', showDiff);
    $('diff').addEventListener('click', function (ev) { if (ev.target === $('diff')) closeDiff(); });
    document.addEventListener('keydown', onKey);
    window.addEventListener('hashchange', function () {
      var h = /stage=(\d+)/.exec(location.hash);
      if (h && +h[1] !== S.stage) showStage(+h[1]);
    });
    var m = /stage=(\d+)/.exec(location.hash);
    S.stage = -1;
    showStage(m ? +m[1] : 0);
  }

  // A small API for tests and for the console.
  window.irc = {
    data: DATA, state: S, showStage: showStage, showView: showView,
    selectNode: function (g, n) { var t = tables(S.stage).byKey[nodeKey(g, n)]; if (t) selectNode(t, true); return !!t; },
    search: function (q) { $('search').value = q; S.query = q; S.hit = -1; applySearch(false); return S.hits.length; },
    diff: function (a, b) {
      var d = diffStages(a, b), out = {};
      for (var k in d) out[k] = d[k].map(function (n) { return n.g + '/' + n.n; });
      return out;
    }
  };
  init();
})();
