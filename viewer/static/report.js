// irc report: stages, pictures, IR text, details, remarks, search and diff.
// Everything it shows is in the page's JSON block; nothing is fetched.
(function () {
  'use strict';
  window.__ircErrors = [];
  window.addEventListener('error', function (e) { window.__ircErrors.push(String(e.message)); });

  var DATA = JSON.parse(document.getElementById('irc-data').textContent);
  var STAGES = DATA.stages;
  var STATUS = ['added', 'moved', 'split', 'changed'];
  var PT = 4 / 3;            // CSS px per point: graphviz draws in points; 100% is the picture's own size
  var READABLE = 0.6 * PT;   // below this scale a label is too small to read
  var LIST_MAX = 300;        // entries shown per list (search results, diff sections)
  var S = { stage: 0, views: {}, cams: {}, sel: null, query: '', hits: [], hit: -1, rem: null };
  var VIEW = null;           // the picture on screen: {svg, x, y, w, h, cam, boxes, mini}

  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) { for (var k in attrs) { if (attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, attrs[k]); } }
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function add(parent, tag, attrs, text) { var e = el(tag, attrs, text); parent.appendChild(e); return e; }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
  function clamp(x, lo, hi) { return Math.max(lo, Math.min(hi, x)); }
  function pad2(i) { return String(i).padStart(2, '0'); }

  // -- node tables, built once per stage ----------------------------------------------
  var F = {};
  DATA.node_fields.forEach(function (f, i) { F[f] = i; });
  var TABLES = {};
  function nodeKey(g, n) { return g + '\u0000' + n; }
  function tables(i) {
    if (TABLES[i]) return TABLES[i];
    var t = { list: [], byKey: {}, byLine: {}, byElem: {}, byLin: {}, byResult: {} };
    STAGES[i].nodes.forEach(function (a) {
      var node = { g: a[F.graph], n: a[F.name], op: a[F.op], line: a[F.line], types: a[F.types],
                   status: a[F.status], lin: a[F.lineage], sig: a[F.signature], path: a[F.path],
                   column: a[F.column], loc: a[F.loc], attrs: a[F.attrs], results: a[F.results],
                   operands: a[F.operands], placement: a[F.placement], scope: a[F.scope],
                   prov: a[F.prov], label: a[F.label], stage: i };
      t.list.push(node);
      t.byKey[nodeKey(node.g, node.n)] = node;
      t.byLine[node.line] = node;
      t.byLin[node.lin] = node;
      node.results.forEach(function (r) { t.byResult[nodeKey(node.g, r[0])] = node; });
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
  function viewKey() { return S.views[S.stage] || ''; }

  // -- what changed between two versions of a node (the diff and the pass history) ------
  function typed(v) { return '%' + v[0] + ' : ' + v[1]; }
  function changes(a, b) {
    var out = [];
    function field(what, x, y) { if ((x || '') !== (y || '')) out.push([what, x || '—', y || '—']); }
    field('graph', '@' + a.g, '@' + b.g);
    field('name', '%' + a.n, '%' + b.n);
    field('op', a.op, b.op);
    field('placement', a.placement, b.placement);
    field('column', a.column, b.column);
    field('scope', a.scope, b.scope);
    var keys = Object.keys(a.attrs).concat(Object.keys(b.attrs).filter(function (k) { return !(k in a.attrs); })).sort();
    keys.forEach(function (k) {
      if (a.attrs[k] !== b.attrs[k]) out.push(['attribute ' + k, k in a.attrs ? a.attrs[k] : '(none)', k in b.attrs ? b.attrs[k] : '(none)']);
    });
    sideBySide('result', a.results, b.results);
    sideBySide('operand', a.operands, b.operands);
    field('source', a.loc, b.loc);
    return out;

    function sideBySide(what, xs, ys) {
      if (xs.length !== ys.length) {
        out.push([what + 's', xs.map(typed).join(', ') || '(none)', ys.map(typed).join(', ') || '(none)']);
        return;
      }
      xs.forEach(function (x, i) {
        var y = ys[i];
        if (x[1] !== y[1]) out.push([what + ' ' + i + ' type', typed(x), typed(y)]);
        else if (what === 'operand' && x[0] !== y[0]) out.push([what + ' ' + i, '%' + x[0], '%' + y[0]]);
      });
    }
  }

  // -- the side panel ---------------------------------------------------------------------
  function stageLabel(st) { return pad2(st.index) + ' ' + st.pass; }
  function countsText(st) {
    var c = st.counts || {}, parts = [];
    STATUS.concat(['removed']).forEach(function (k) { if (c[k]) parts.push(c[k] + ' ' + k); });
    return parts.join(', ');
  }
  function buildSide() {
    var list = $('stages'), sel = $('stage-select'), da = $('diff-a'), db = $('diff-b');
    STAGES.forEach(function (st, i) {
      var li = add(list, 'li', { 'data-stage': i, title: countsText(st) || 'no change drawn' });
      add(li, 'span', { 'class': 'n' }, pad2(st.index));
      add(li, 'span', null, st.pass);
      if (st.seconds !== null && st.seconds !== undefined) add(li, 'span', { 'class': 'c' }, ms(st.seconds));
      li.addEventListener('click', function () { showStage(i); });
      [sel, da, db].forEach(function (s) { add(s, 'option', { value: i }, stageLabel(st)); });
    });
    sel.addEventListener('change', function () { showStage(+sel.value); });
    var tbody = $('passes').tBodies[0];
    DATA.passes.forEach(function (p) {
      var has = p.stage !== null && p.stage !== undefined;
      var tr = add(tbody, 'tr', { 'class': (p.changed ? '' : 'unchanged') + (has ? ' has-stage' : '') });
      add(tr, 'td', null, String(p.index));
      add(tr, 'td', null, p.pass);
      add(tr, 'td', { 'class': 'ms' }, p.seconds === null || p.seconds === undefined ? '' : (p.seconds * 1000).toFixed(2));
      add(tr, 'td', null, p.changed ? 'yes' : 'no');
      if (has) tr.addEventListener('click', function () { showStage(p.stage); });
      p.row = tr;
    });
    if (!DATA.passes.length) add(add(tbody, 'tr'), 'td', { colspan: 4, 'class': 'hint' }, 'none');
    var rl = $('remarks');
    $('remark-count').textContent = DATA.remarks.length ? '(' + DATA.remarks.length + ')' : '';
    DATA.remarks.forEach(function (r, k) {
      var li = add(rl, 'li', { 'data-remark': k, title: r.reason || '' });
      add(li, 'span', { 'class': 'kind ' + (r.kind || '') }, r.kind || '');
      add(li, 'span', null, r.message || ((r.op || '') + ' ' + (r.reason || '')));
      add(li, 'span', { 'class': 'src' }, remarkWhere(r));
      li.addEventListener('click', function () { showRemark(k); });
    });
    if (!DATA.remarks.length) add(rl, 'li', { 'class': 'hint' }, 'none');
    var ol = $('onnx');
    DATA.onnx.forEach(function (o) {
      var li = add(ol, 'li');
      var a = add(li, 'a', { href: o.path, title: 'show what this model holds' }, o.path);
      a.addEventListener('click', function (ev) { ev.preventDefault(); showOnnx(o); });
      var info = [];
      if (o.nodes !== undefined) info.push(o.nodes + ' nodes');
      if (o.bytes !== undefined) info.push(kb(o.bytes));
      if (o.opset) info.push('opset ' + o.opset);
      if (o.inputs) info.push('in: ' + o.inputs.join(', '));
      if (o.outputs) info.push('out: ' + o.outputs.join(', '));
      if (o.error) info.push(o.error);
      if (info.length) add(li, 'span', { 'class': 'info' }, info.join(' · '));
    });
    if (!DATA.onnx.length) add(ol, 'li', { 'class': 'hint' }, 'none');
    var lg = $('legend');
    STATUS.forEach(function (s) {
      var li = add(lg, 'li');
      add(li, 'span', { 'class': 'sw' }).style.borderColor = DATA.colours[s];
      add(li, 'span', null, s + ' by this stage\'s pass');
    });
  }
  function remarkWhere(r) { return [r.pass, r.op, r.column ? 'col ' + r.column : null, r.source].filter(Boolean).join(' · '); }
  function ms(s) { return s < 1 ? (s * 1000).toFixed(1) + ' ms' : s.toFixed(2) + ' s'; }
  function kb(b) { return b < 1024 ? b + ' B' : b < 1048576 ? (b / 1024).toFixed(1) + ' KiB' : (b / 1048576).toFixed(1) + ' MiB'; }

  // -- stages and IR text ---------------------------------------------------------------------
  function showStage(i, keepView) {
    i = clamp(i, 0, STAGES.length - 1);
    var changed = i !== S.stage || !$('ir').firstChild;
    var was = S.sel;
    S.stage = i;
    var st = STAGES[i];
    Array.prototype.forEach.call($('stages').children, function (li, k) { li.classList.toggle('current', k === i); });
    DATA.passes.forEach(function (p) { p.row.classList.toggle('current', p.stage === i); });
    $('stage-select').value = i;
    if (changed) {
      renderIR(st);
      // the same node (by lineage) stays selected from stage to stage
      S.sel = was ? tables(i).byLin[was.lin] || null : null;
      if (was) showDetails(S.sel, was);
    }
    showView(keepView !== undefined ? keepView : viewKey());
    updateHash();
  }

  function renderIR(st) {
    var ir = $('ir'), t = tables(S.stage), head = $('ir-head');
    clear(ir);
    clear(head);
    add(head, 'span', null, (st.file || 'IR') + ' · ' + t.list.length + ' nodes' +
      (st.counts && countsText(st) ? ' · ' + countsText(st) : ''));
    var frag = document.createDocumentFragment();
    var texts = st.ir.split('\n');
    if (texts.length && texts[texts.length - 1] === '') texts.pop();
    texts.forEach(function (text, k) {
      var line = k + 1, node = t.byLine[line];
      var d = add(frag, 'div', { 'class': 'ln' + (node && node.status ? ' st-' + node.status : ''), id: 'L' + line, 'data-line': line });
      if (node) d.setAttribute('data-node', node.g + '/' + node.n);
      add(d, 'span', { 'class': 'no' }, String(line));
      add(d, 'span', { 'class': 'tx' }, text);
    });
    ir.appendChild(frag);
  }

  // -- pictures: a camera over the SVG's viewBox (wheel zoom, drag pan, minimap) -------------
  function showView(key, focus) {
    var st = STAGES[S.stage];
    if (!st.views[key]) key = '';
    S.views[S.stage] = key;
    var v = st.views[key], c = $('canvas');
    clear(c);
    VIEW = null;
    if (v.svg) {
      c.innerHTML = DATA.svgs[v.svg];
      VIEW = prepareSvg(c.querySelector('svg'));
    } else {
      var box = add(c, 'div', { 'class': 'undrawn' }, v.error || 'not drawn');
      if (v.dot) {
        var det = add(box, 'details');
        add(det, 'summary', null, 'DOT text');
        add(det, 'pre', null, DATA.dots[v.dot]);
      }
    }
    var notes = $('notes');
    clear(notes);
    (key === '' ? st.notes : []).forEach(function (n) { add(notes, 'div', null, n); });
    if (v.error && v.svg) add(notes, 'div', null, v.error);
    buildCrumbs(st, key);
    if (VIEW) {
      var saved = S.cams[camKey()];
      if (saved) { VIEW.cam = saved; applyCam(); } else openCamera();
      drawMinimap();
    } else {
      $('minimap').hidden = true;
      $('zoom-level').textContent = '';
    }
    applySearch(false);
    markRemark();
    if (S.sel && S.sel.stage === S.stage) highlightNode(S.sel, !!focus);
  }

  function crumbLabel(st, k) {
    if (k === '') return stageLabel(st);
    var v = st.views[k], parent = v.parent ? st.views[v.parent].title.split(' › ') : [];
    var parts = v.title.split(' › '), i = 0;
    while (i < parts.length - 1 && i < parent.length && parts[i] === parent[i]) i++;
    return parts.slice(i).join(' › ');
  }
  function buildCrumbs(st, key) {
    var c = $('crumbs'), chain = [];
    clear(c);
    for (var k = key; k !== null && k !== undefined; k = st.views[k] ? st.views[k].parent : null) {
      chain.unshift(k);
      if (k === '') break;
    }
    chain.forEach(function (k, j) {
      if (j) add(c, 'span', { 'class': 'sep' }, '›');
      var label = crumbLabel(st, k);
      if (j === chain.length - 1) { add(c, 'strong', null, label); return; }
      add(c, 'a', null, label).addEventListener('click', function () { showView(k); });
    });
  }

  function camKey() { return S.stage + '\u0000' + viewKey(); }
  function prepareSvg(svg) {
    var vb = (svg.getAttribute('viewBox') || '').trim().split(/[\s,]+/).map(Number);
    if (vb.length !== 4 || !(vb[2] > 0 && vb[3] > 0)) {
      vb = [0, 0, parseFloat(svg.getAttribute('width')) || 100, parseFloat(svg.getAttribute('height')) || 100];
    }
    svg.setAttribute('width', '100%');
    svg.setAttribute('height', '100%');
    svg.setAttribute('preserveAspectRatio', 'xMinYMin meet');
    return { svg: svg, x: vb[0], y: vb[1], w: vb[2], h: vb[3], cam: null, boxes: null, mini: 0 };
  }
  function room() { var g = $('graph'); return [Math.max(g.clientWidth, 1), Math.max(g.clientHeight, 1)]; }
  function fitScale() { var r = room(); return Math.min((r[0] - 16) / VIEW.w, (r[1] - 16) / VIEW.h); }
  function applyCam() {
    if (!VIEW) return;
    var r = room(), c = VIEW.cam;
    VIEW.svg.setAttribute('viewBox', [c.x, c.y, r[0] / c.s, r[1] / c.s].join(' '));
    $('zoom-level').textContent = Math.round(c.s / PT * 100) + '%';
    placeMinimapView();
  }
  function centreAt(px, py, s) {
    var r = room();
    VIEW.cam = S.cams[camKey()] = { x: px - r[0] / 2 / s, y: py - r[1] / 2 / s, s: s };
    applyCam();
  }
  function fit() { if (VIEW) centreAt(VIEW.x + VIEW.w / 2, VIEW.y + VIEW.h / 2, fitScale()); }
  // A view opens whole when it can be read whole; otherwise at a readable
  // size, centred on the node nearest its middle (never on empty space).
  function openCamera() {
    var s = fitScale();
    if (s >= READABLE) { centreAt(VIEW.x + VIEW.w / 2, VIEW.y + VIEW.h / 2, Math.min(s, PT)); return; }
    var mx = VIEW.x + VIEW.w / 2, my = VIEW.y + VIEW.h / 2, best = null, bestD = Infinity;
    nodeBoxes().forEach(function (b) {
      if (b.cluster) return;
      var dx = b.x + b.w / 2 - mx, dy = b.y + b.h / 2 - my, d = dx * dx + dy * dy;
      if (d < bestD) { bestD = d; best = b; }
    });
    centreAt(best ? best.x + best.w / 2 : mx, best ? best.y + best.h / 2 : my, 0.8 * PT);
  }
  function zoomAt(f, cx, cy) {
    if (!VIEW) return;
    var c = VIEW.cam, s = clamp(c.s * f, Math.min(fitScale() / 2, 0.05 * PT), 8 * PT);
    var px = c.x + cx / c.s, py = c.y + cy / c.s;
    VIEW.cam = S.cams[camKey()] = { x: px - cx / s, y: py - cy / s, s: s };
    applyCam();
  }
  function zoom(f) {
    if (!VIEW) return;
    if (f === 0) { fit(); return; }
    var r = room();
    zoomAt(f, r[0] / 2, r[1] / 2);
  }

  // Boxes of the drawn nodes and clusters in viewBox units (for the minimap
  // and for centring), measured once per view.
  function toViewBox(e) {
    return VIEW.svg.getScreenCTM().inverse().multiply(e.getScreenCTM());
  }
  function boxOf(e, m) {
    var b = e.getBBox();
    return { x: m.a * b.x + m.c * b.y + m.e, y: m.b * b.x + m.d * b.y + m.f, w: m.a * b.width, h: m.d * b.height };
  }
  function nodeBoxes() {
    if (VIEW.boxes) return VIEW.boxes;
    var root = VIEW.svg.querySelector('g.graph') || VIEW.svg, m = toViewBox(root);
    VIEW.boxes = Array.prototype.map.call(VIEW.svg.querySelectorAll('g.node, g.cluster'), function (g) {
      var b = boxOf(g, m), shape = g.querySelector('polygon, path, ellipse');
      b.cluster = g.classList.contains('cluster');
      b.fill = shape ? shape.getAttribute(b.cluster ? 'stroke' : 'fill') : null;
      return b;
    });
    return VIEW.boxes;
  }
  function reveal(e) {
    var b = boxOf(e, toViewBox(e)), c = VIEW.cam, r = room();
    var sx = (b.x + b.w / 2 - c.x) * c.s, sy = (b.y + b.h / 2 - c.y) * c.s;
    var s = c.s < READABLE ? PT : c.s;
    if (s !== c.s || sx < 30 || sy < 30 || sx > r[0] - 30 || sy > r[1] - 30) centreAt(b.x + b.w / 2, b.y + b.h / 2, s);
  }

  function drawMinimap() {
    var mm = $('minimap'), cv = $('minimap-canvas');
    var k = Math.min(180 / VIEW.w, 140 / VIEW.h);
    cv.width = Math.max(2, Math.round(VIEW.w * k));
    cv.height = Math.max(2, Math.round(VIEW.h * k));
    var ctx = cv.getContext('2d');
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, cv.width, cv.height);
    nodeBoxes().forEach(function (b) {
      var x = (b.x - VIEW.x) * k, y = (b.y - VIEW.y) * k;
      if (b.cluster) {
        ctx.strokeStyle = b.fill && b.fill !== 'none' ? b.fill : '#999';
        ctx.strokeRect(x, y, b.w * k, b.h * k);
      } else {
        ctx.fillStyle = b.fill && b.fill !== 'none' ? b.fill : '#bbb';
        ctx.fillRect(x, y, Math.max(1.5, b.w * k), Math.max(1.5, b.h * k));
      }
    });
    VIEW.mini = k;
    mm.hidden = false;
    placeMinimapView();
  }
  function placeMinimapView() {
    if (!VIEW || !VIEW.mini) return;
    var k = VIEW.mini, c = VIEW.cam, r = room(), v = $('minimap-view');
    var whole = c.x <= VIEW.x + 1 && c.y <= VIEW.y + 1 && c.x + r[0] / c.s >= VIEW.x + VIEW.w - 1 && c.y + r[1] / c.s >= VIEW.y + VIEW.h - 1;
    $('minimap').classList.toggle('whole', whole);
    // the part of the picture on screen, clipped to the minimap
    var x0 = Math.max(c.x, VIEW.x), y0 = Math.max(c.y, VIEW.y);
    var x1 = Math.min(c.x + r[0] / c.s, VIEW.x + VIEW.w), y1 = Math.min(c.y + r[1] / c.s, VIEW.y + VIEW.h);
    v.style.left = ((x0 - VIEW.x) * k) + 'px';
    v.style.top = ((y0 - VIEW.y) * k) + 'px';
    v.style.width = Math.max(2, (x1 - x0) * k) + 'px';
    v.style.height = Math.max(2, (y1 - y0) * k) + 'px';
  }
  function minimapTo(ev) {
    var rect = $('minimap-canvas').getBoundingClientRect(), k = VIEW.mini;
    centreAt(VIEW.x + (ev.clientX - rect.left) / k, VIEW.y + (ev.clientY - rect.top) / k, VIEW.cam.s);
  }

  var drag = null, dragged = false;
  function wirePanZoom() {
    var g = $('graph'), mm = $('minimap');
    g.addEventListener('wheel', function (ev) {
      if (!VIEW) return;
      ev.preventDefault();
      var r = g.getBoundingClientRect();
      if (ev.shiftKey && !ev.ctrlKey) {   // shift+wheel pans sideways
        centreAt(VIEW.cam.x + (r.width / 2 + ev.deltaY) / VIEW.cam.s, VIEW.cam.y + r.height / 2 / VIEW.cam.s, VIEW.cam.s);
        return;
      }
      var unit = ev.deltaMode === 1 ? 0.05 : ev.deltaMode === 2 ? 1 : 0.0015;
      zoomAt(Math.exp(-ev.deltaY * unit), ev.clientX - r.left, ev.clientY - r.top);
    }, { passive: false });
    g.addEventListener('pointerdown', function (ev) {
      if (ev.button !== 0 || !VIEW || mm.contains(ev.target)) return;
      drag = { x: ev.clientX, y: ev.clientY, cam: VIEW.cam, moved: false };
    });
    window.addEventListener('pointermove', function (ev) {
      if (!drag || !VIEW) return;
      var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (!drag.moved && dx * dx + dy * dy < 16) return;
      drag.moved = true;
      g.classList.add('panning');
      VIEW.cam = S.cams[camKey()] = { x: drag.cam.x - dx / drag.cam.s, y: drag.cam.y - dy / drag.cam.s, s: drag.cam.s };
      applyCam();
    });
    window.addEventListener('pointerup', function () {
      if (drag && drag.moved) { dragged = true; setTimeout(function () { dragged = false; }, 0); }
      drag = null;
      g.classList.remove('panning');
    });
    var mdrag = false;
    mm.addEventListener('pointerdown', function (ev) { ev.stopPropagation(); mdrag = true; mm.setPointerCapture(ev.pointerId); minimapTo(ev); });
    mm.addEventListener('pointermove', function (ev) { if (mdrag) minimapTo(ev); });
    mm.addEventListener('pointerup', function () { mdrag = false; });
    if (window.ResizeObserver) new ResizeObserver(function () { applyCam(); }).observe(g);
    else window.addEventListener('resize', applyCam);
  }

  // -- selection ---------------------------------------------------------------------------
  function clearClass(root, cls) {
    Array.prototype.forEach.call(root.querySelectorAll('.' + cls), function (e) { e.classList.remove(cls); });
  }
  function elementById(id) {
    var e = document.getElementById(id);
    return e && $('canvas').contains(e) ? e : null;
  }
  // A node is marked (selected, a search hit, a remark's) twice: its drawn
  // element gets class 'irc-' + cls, its IR line cls.
  function unmarkAll(cls) {
    clearClass($('canvas'), 'irc-' + cls);
    clearClass($('ir'), cls);
  }
  function markNode(node, key, cls) {
    var id = elementIn(node, key), e = id && elementById(id), line = $('L' + node.line);
    if (e) e.classList.add('irc-' + cls);
    if (line) line.classList.add(cls);
    return { element: e, line: line };
  }
  function selectNode(node, scroll) {
    if (node.stage !== S.stage) showStage(node.stage);
    S.sel = node;
    var here = elementIn(node, viewKey()), boxes = STAGES[S.stage].views[viewKey()].boxes;
    if ((!here || boxes[here]) && node.path.length) {
      // not drawn here, or inside a box: open the view that draws the node itself
      showView(node.path[node.path.length - 1][0], true);
    } else {
      highlightNode(node, scroll !== false);
    }
    showDetails(node);
    updateHash();
  }
  function highlightNode(node, scroll) {
    unmarkAll('sel');
    var marked = markNode(node, viewKey(), 'sel');
    if (scroll && VIEW && marked.element) reveal(marked.element);
    if (scroll && marked.line) marked.line.scrollIntoView({ block: 'center' });
  }

  function onGraphClick(ev) {
    if (dragged) return;
    var g = ev.target.closest ? ev.target.closest('g.node') : null;
    if (!g) return;
    var st = STAGES[S.stage], key = viewKey(), v = st.views[key];
    if (v.boxes[g.id]) { showView(v.boxes[g.id]); showBoxDetails(v.boxes[g.id]); return; }
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
      showDetails(nodes[0]);
      updateHash();
    }
  }
  function onIrClick(ev) {
    var d = ev.target.closest ? ev.target.closest('.ln') : null;
    if (!d) return;
    var node = tables(S.stage).byLine[+d.getAttribute('data-line')];
    if (node) selectNode(node, true);
  }

  // -- the details panel ----------------------------------------------------------------------
  function section(body, title) {
    var s = add(body, 'section', { 'class': 'd-sec' });
    add(s, 'h3', null, title);
    return s;
  }
  function nodeLink(parent, node, text) {
    var a = add(parent, 'a', { title: '@' + node.g + ' %' + node.n }, text);
    a.addEventListener('click', function () { selectNode(node, true); });
    return a;
  }
  function showDetails(node, missing) {
    var body = $('details-body');
    clear(body);
    body.scrollTop = 0;
    if (!node) {
      if (missing) add(body, 'p', { 'class': 'hint' }, '%' + missing.n + ' (' + missing.op + ') is not in stage ' + stageLabel(STAGES[S.stage]) + '.');
      return;
    }
    var head = add(body, 'div', { 'class': 'd-head' });
    add(head, 'strong', { 'class': 'd-op' }, node.label);
    if (node.label !== node.op) add(head, 'span', { 'class': 'd-graph' }, node.op);
    add(head, 'span', { 'class': 'd-name' }, '%' + node.n);
    add(head, 'span', { 'class': 'd-graph' }, '@' + node.g);
    if (node.status) add(head, 'span', { 'class': 'badge st-' + node.status }, node.status);

    var t = tables(node.stage);
    var io = section(body, 'Types');
    var tab = add(io, 'table', { 'class': 'kv' });
    node.results.forEach(function (r) { row(tab, 'result', typed(r)); });
    node.operands.forEach(function (o, i) {
      var tr = add(tab, 'tr');
      add(tr, 'th', null, 'operand ' + i);
      var td = add(tr, 'td');
      var producer = t.byResult[nodeKey(node.g, o[0])];
      if (producer) nodeLink(td, producer, typed(o)); else td.textContent = typed(o);
    });
    if (!node.results.length && !node.operands.length) row(tab, '', 'no results, no operands');

    var keys = Object.keys(node.attrs);
    var at = section(body, 'Attributes' + (keys.length ? ' (' + keys.length + ')' : ''));
    if (!keys.length) add(at, 'div', { 'class': 'hint' }, 'none');
    else {
      var atab = add(at, 'table', { 'class': 'kv attrs' });
      keys.forEach(function (k) { row(atab, k, node.attrs[k], true); });
    }

    var where = add(section(body, 'Where'), 'table', { 'class': 'kv' });
    row(where, 'graph', '@' + node.g + ' on ' + node.placement);
    var view = STAGES[node.stage].views[viewKey()];
    if (view && view.folded && view.folded.indexOf(node.g + '/' + node.n) >= 0) {
      row(where, 'drawn', 'inside the node that uses it (folded), which is highlighted');
    }
    if (node.column) row(where, 'column', node.column);
    if (node.scope) row(where, 'scope', node.scope);
    row(where, 'IR line', STAGES[node.stage].file ? STAGES[node.stage].file + ':' + node.line : String(node.line));

    showSource(body, node.loc);
    showHistory(body, node);
    var rems = remarksOf(node);
    if (rems.length) {
      var rs = add(section(body, 'Remarks (' + rems.length + ')'), 'ul', { 'class': 'd-remarks' });
      rems.forEach(function (k) {
        var r = DATA.remarks[k], li = add(rs, 'li');
        add(li, 'span', { 'class': 'kind ' + (r.kind || '') }, r.kind || '');
        add(li, 'span', null, r.message || r.reason || '');
        add(li, 'span', { 'class': 'src' }, remarkWhere(r));
      });
    }
  }
  function row(table, key, value, pre) {
    var tr = add(table, 'tr');
    add(tr, 'th', null, key);
    add(tr, 'td', pre ? { 'class': 'pre' } : null, value);
    return tr;
  }
  function showSource(body, loc) {
    if (!loc) return;
    var s = section(body, 'Source');
    add(s, 'div', { 'class': 'd-loc' }, loc);
    var cut = loc.lastIndexOf(':'), file = loc.slice(0, cut), line = +loc.slice(cut + 1);
    var lines = DATA.sources[file];
    if (!lines || !(String(line) in lines)) {
      add(s, 'div', { 'class': 'hint' }, 'the file could not be read when the report was written');
      return;
    }
    var pre = add(s, 'pre', { 'class': 'snippet' });
    for (var k = line - DATA.snippet_context; k <= line + DATA.snippet_context; k++) {
      if (!(String(k) in lines)) continue;
      var d = add(pre, 'div', { 'class': k === line ? 'hot' : null });
      add(d, 'span', { 'class': 'no' }, String(k));
      d.appendChild(document.createTextNode(lines[String(k)]));
    }
  }
  // Where the node first appears and each later stage that changed it, with what changed.
  function nodeHistory(node) {
    var out = [], prev = null;
    for (var i = 0; i < STAGES.length; i++) {
      var cur = tables(i).byLin[node.lin];
      if (!cur) { if (prev) out.push({ stage: i, what: 'removed', changes: [] }); prev = null; continue; }
      if (!prev) out.push({ stage: i, what: i === 0 ? 'captured' : 'first appears', node: cur, changes: [] });
      else {
        var ch = changes(prev, cur);
        if (ch.length || cur.status) out.push({ stage: i, what: cur.status || 'changed', node: cur, changes: ch });
      }
      prev = cur;
    }
    return out;
  }
  function showHistory(body, node) {
    var s = section(body, 'Pass history');
    if (node.prov.length) add(s, 'div', { 'class': 'd-prov' }, 'prov: ' + node.prov.join(', '));
    var ul = add(s, 'ul', { 'class': 'd-hist' });
    nodeHistory(node).forEach(function (h) {
      var li = add(ul, 'li', { 'class': h.stage === node.stage ? 'here' : null });
      var a = add(li, 'a', null, stageLabel(STAGES[h.stage]));
      a.addEventListener('click', function () { if (h.node) selectNode(h.node, true); else showStage(h.stage); });
      add(li, 'span', { 'class': 'badge st-' + h.what }, h.what);
      if (h.node && (h.node.g !== node.g || h.node.n !== node.n)) add(li, 'span', { 'class': 'hint' }, ' as @' + h.node.g + ' %' + h.node.n);
      changeList(li, h.changes);
    });
  }
  // What changed, the first few of a long list (a return's hundreds of operands) shown at once.
  function changeList(parent, changes) {
    if (!changes.length) return;
    var ul = add(parent, 'ul', { 'class': 'changes' }), FEW = 8;
    changes.slice(0, FEW).forEach(function (c) { changeItem(ul, c); });
    if (changes.length > FEW) {
      var more = add(add(ul, 'li'), 'a', null, '… ' + (changes.length - FEW) + ' more changes');
      more.addEventListener('click', function () {
        ul.removeChild(more.parentNode);
        changes.slice(FEW).forEach(function (c) { changeItem(ul, c); });
      });
    }
  }
  function changeItem(parent, c) {
    var li = add(parent, 'li');
    add(li, 'span', { 'class': 'what' }, c[0] + ': ');
    add(li, 'span', { 'class': 'old' }, c[1]);
    add(li, 'span', { 'class': 'arrow' }, ' → ');
    add(li, 'span', { 'class': 'new' }, c[2]);
  }
  var REMARKS_BY_LIN = null;
  function remarksOf(node) {
    if (!REMARKS_BY_LIN) {
      REMARKS_BY_LIN = {};
      DATA.remarks.forEach(function (r, k) {
        var t = tables(r.stage);
        r.nodes.forEach(function (gn) {
          var n = t.byKey[nodeKey(gn[0], gn[1])];
          if (n) (REMARKS_BY_LIN[n.lin] = REMARKS_BY_LIN[n.lin] || []).push(k);
        });
      });
    }
    return REMARKS_BY_LIN[node.lin] || [];
  }
  function showBoxDetails(key) {
    S.sel = null;
    var body = $('details-body'), st = STAGES[S.stage], v = st.views[key];
    clear(body);
    var members = tables(S.stage).list.filter(function (n) { return elementIn(n, key) !== null; });
    var head = add(body, 'div', { 'class': 'd-head' });
    add(head, 'strong', { 'class': 'd-op' }, '▸ ' + crumbLabel(st, key));
    add(head, 'span', { 'class': 'd-name' }, members.length + ' ops');
    var ops = {}, statuses = {};
    members.forEach(function (n) {
      ops[n.op] = (ops[n.op] || 0) + 1;
      if (n.status) statuses[n.status] = (statuses[n.status] || 0) + 1;
    });
    var tab = add(section(body, 'Ops'), 'table', { 'class': 'kv' });
    Object.keys(ops).sort(function (a, b) { return ops[b] - ops[a]; }).forEach(function (op) { row(tab, op, '×' + ops[op]); });
    if (Object.keys(statuses).length) {
      var ch = add(section(body, 'Changed by this stage\'s pass'), 'table', { 'class': 'kv' });
      Object.keys(statuses).forEach(function (s) { row(ch, s, String(statuses[s])); });
    }
    add(body, 'p', { 'class': 'hint' }, v.title);
  }

  // -- search ---------------------------------------------------------------------------------
  var FIELDS = { op: ['op', 'label'], name: ['n'], type: ['types'], types: ['types'], col: ['column'], column: ['column'],
                 scope: ['scope'], src: ['loc'], source: ['loc'], file: ['loc'] };
  var ANY = ['op', 'label', 'n', 'types', 'column', 'scope', 'loc'];
  // The test a node must pass for query ``q``: FILE:LINE (or :LINE) a source
  // line, FIELD:TEXT one field, anything else a substring of any field.
  function compileQuery(q) {
    q = q.trim().toLowerCase();
    if (!q) return null;
    var m = /^([a-z]+):\s*(.+)$/.exec(q);
    if (m && FIELDS[m[1]]) return contains(FIELDS[m[1]], m[2]);
    m = /^(.*):(\d+)$/.exec(q);
    if (m) {
      return function (node) {
        var l = node.loc && node.loc.toLowerCase();
        if (!l) return false;
        if (l === q) return true;
        if (l.length <= q.length || l.slice(-q.length) !== q) return false;
        return q[0] === ':' || q[0] === '/' || l[l.length - q.length - 1] === '/';
      };
    }
    return contains(ANY, q);
  }
  function contains(fields, text) {
    return function (node) {
      for (var i = 0; i < fields.length; i++) {
        var v = node[fields[i]];
        if (v && String(v).toLowerCase().indexOf(text) >= 0) return true;
      }
      return false;
    };
  }
  function applySearch(jump) {
    unmarkAll('match');
    var out = $('search-count');
    clear(out);
    var test = compileQuery(S.query);
    S.hits = [];
    if (!test) { showResults(); return; }
    var key = viewKey();
    tables(S.stage).list.forEach(function (node) {
      if (!test(node)) return;
      S.hits.push(node);
      markNode(node, key, 'match');
    });
    out.appendChild(document.createTextNode(S.hits.length + ' match' + (S.hits.length === 1 ? '' : 'es') + ' here'));
    var others = [];
    STAGES.forEach(function (st, i) {
      if (i === S.stage) return;
      var k = tables(i).list.filter(test).length;
      if (k) others.push([i, k]);
    });
    if (others.length) {
      out.appendChild(document.createTextNode(' · other stages:'));
      others.forEach(function (o) {
        var a = add(out, 'a', { title: stageLabel(STAGES[o[0]]) }, pad2(STAGES[o[0]].index) + ' (' + o[1] + ')');
        a.addEventListener('click', function () { showStage(o[0]); });
      });
    }
    showResults();
    if (jump && S.hits.length) { S.hit = 0; selectNode(S.hits[0], true); markHit(); }
  }
  function showResults() {
    var ol = $('search-results');
    clear(ol);
    if (!S.hits.length || document.activeElement !== $('search')) { ol.hidden = true; return; }
    S.hits.slice(0, LIST_MAX).forEach(function (node, k) {
      var li = add(ol, 'li', { 'data-hit': k });
      add(li, 'b', null, node.label);
      add(li, 'span', null, ' %' + node.n);
      add(li, 'span', { 'class': 'g' }, ' @' + node.g);
      if (node.column) add(li, 'span', { 'class': 'g' }, ' col ' + node.column);
      if (node.loc) add(li, 'span', { 'class': 'loc' }, node.loc);
      li.addEventListener('mousedown', function (ev) { ev.preventDefault(); S.hit = k; selectNode(node, true); markHit(); });
    });
    if (S.hits.length > LIST_MAX) add(ol, 'li', { 'class': 'hint' }, '… ' + (S.hits.length - LIST_MAX) + ' more');
    ol.hidden = false;
    markHit();
  }
  function markHit() {
    Array.prototype.forEach.call($('search-results').children, function (li) {
      var on = +li.getAttribute('data-hit') === S.hit;
      li.classList.toggle('on', on);
      if (on) li.scrollIntoView({ block: 'nearest' });
    });
  }
  function nextHit(step) {
    if (!S.hits.length) return;
    S.hit = (S.hit + step + S.hits.length) % S.hits.length;
    selectNode(S.hits[S.hit], true);
    markHit();
  }

  // -- remarks ---------------------------------------------------------------------------------
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
    unmarkAll('rem');
    if (S.rem === null) return;
    var r = DATA.remarks[S.rem];
    if (r.stage !== S.stage) return;
    var t = tables(S.stage), key = viewKey();
    r.nodes.forEach(function (gn) {
      var node = t.byKey[nodeKey(gn[0], gn[1])];
      if (node) markNode(node, key, 'rem');
    });
  }

  // -- diff between two stages: nodes (with what changed), and IR side by side ------------------
  function diffStages(a, b) {
    var A = tables(a).byLin, out = { added: [], removed: [], moved: [], changed: [] };
    tables(b).list.forEach(function (n) {
      var old = A[n.lin];
      if (!old) { out.added.push({ node: n, changes: [] }); return; }
      var ch = changes(old, n);
      if (old.g !== n.g || old.placement !== n.placement) out.moved.push({ node: n, old: old, changes: ch });
      else if (ch.length || old.sig !== n.sig) out.changed.push({ node: n, old: old, changes: ch });
    });
    var B = tables(b).byLin;
    tables(a).list.forEach(function (n) { if (!B[n.lin]) out.removed.push({ node: n, changes: [] }); });
    return out;
  }
  var DIFF_TAB = 'nodes';
  function showDiff() {
    var a = +$('diff-a').value, b = +$('diff-b').value, body = $('diff-body');
    clear(body);
    $('diff-tab-nodes').classList.toggle('on', DIFF_TAB === 'nodes');
    $('diff-tab-ir').classList.toggle('on', DIFF_TAB === 'ir');
    if (DIFF_TAB === 'ir') { showSideBySide(body, a, b); return; }
    var d = diffStages(a, b);
    ['changed', 'moved', 'added', 'removed'].forEach(function (kind) {
      add(body, 'h3', { 'class': kind }, kind + ' (' + d[kind].length + ')');
      if (!d[kind].length) { add(body, 'div', { 'class': 'none' }, 'none'); return; }
      var ul = add(body, 'ul', { 'class': 'diff-list' });
      d[kind].slice(0, LIST_MAX).forEach(function (e) {
        var n = e.node, li = add(ul, 'li', { 'data-node': n.g + '/' + n.n });
        var text = '@' + n.g + ' %' + n.n + ' = ' + n.op + (n.loc ? '   # ' + n.loc : '');
        if (kind === 'moved') text += '   (from @' + e.old.g + ' %' + e.old.n + ')';
        var a2 = add(li, 'a', null, text);
        a2.addEventListener('click', function () { closeSheets(); selectNode(n, true); });
        changeList(li, e.changes.filter(function (c) { return kind !== 'moved' || c[0] !== 'graph'; }));
      });
      if (d[kind].length > LIST_MAX) add(body, 'div', { 'class': 'none' }, '… ' + (d[kind].length - LIST_MAX) + ' more');
    });
  }

  // Patience diff of two texts' lines: lines unique to both sides anchor
  // the alignment (IR lines mostly are: each defines its own %name).
  function lineDiff(A, B) {
    var out = [];
    function rec(a0, a1, b0, b1) {
      var tail = [];
      while (a0 < a1 && b0 < b1 && A[a0] === B[b0]) { out.push(['=', a0++, b0++]); }
      while (a1 > a0 && b1 > b0 && A[a1 - 1] === B[b1 - 1]) { tail.push(['=', --a1, --b1]); }
      var anchors = a0 < a1 && b0 < b1 ? uniqueCommon(a0, a1, b0, b1) : [];
      if (!anchors.length) {
        for (var i = a0; i < a1; i++) out.push(['-', i, -1]);
        for (var j = b0; j < b1; j++) out.push(['+', -1, j]);
      } else {
        var pa = a0, pb = b0;
        anchors.forEach(function (p) { rec(pa, p[0], pb, p[1]); out.push(['=', p[0], p[1]]); pa = p[0] + 1; pb = p[1] + 1; });
        rec(pa, a1, pb, b1);
      }
      for (var k = tail.length - 1; k >= 0; k--) out.push(tail[k]);
    }
    function uniqueCommon(a0, a1, b0, b1) {
      var ca = new Map(), cb = new Map(), pairs = [];
      for (var i = a0; i < a1; i++) ca.set(A[i], ca.has(A[i]) ? -1 : i);
      for (var j = b0; j < b1; j++) cb.set(B[j], cb.has(B[j]) ? -1 : j);
      for (j = b0; j < b1; j++) {
        var x = ca.get(B[j]);
        if (x !== undefined && x >= 0 && cb.get(B[j]) === j) pairs.push([x, j]);
      }
      return increasing(pairs);
    }
    rec(0, A.length, 0, B.length);
    return out;
  }
  // The longest run of ``pairs`` (ordered by their second item) whose first items increase.
  function increasing(pairs) {
    var tops = [], back = new Array(pairs.length);
    pairs.forEach(function (p, k) {
      var lo = 0, hi = tops.length;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (pairs[tops[mid]][0] < p[0]) lo = mid + 1; else hi = mid; }
      back[k] = lo ? tops[lo - 1] : -1;
      tops[lo] = k;
    });
    var out = [];
    for (var k = tops.length ? tops[tops.length - 1] : -1; k >= 0; k = back[k]) out.unshift(pairs[k]);
    return out;
  }
  function irLines(i) {
    var lines = STAGES[i].ir.split('\n');
    if (lines.length && lines[lines.length - 1] === '') lines.pop();
    return lines;
  }
  // Rows [left line or -1, right line or -1, kind]; a run of removed lines
  // followed by added ones is shown pairwise as changed.
  function sideRows(A, B) {
    var ops = lineDiff(A, B), rows = [], k = 0;
    while (k < ops.length) {
      if (ops[k][0] === '=') { rows.push([ops[k][1], ops[k][2], 'same']); k++; continue; }
      var dels = [], adds = [];
      while (k < ops.length && ops[k][0] !== '=') { (ops[k][0] === '-' ? dels : adds).push(ops[k]); k++; }
      for (var i = 0; i < Math.max(dels.length, adds.length); i++) {
        var l = i < dels.length ? dels[i][1] : -1, r = i < adds.length ? adds[i][2] : -1;
        rows.push([l, r, l >= 0 && r >= 0 ? 'chg' : l >= 0 ? 'del' : 'add']);
      }
    }
    return rows;
  }
  function showSideBySide(body, a, b) {
    var A = irLines(a), B = irLines(b), rows = sideRows(A, B), CONTEXT = 3;
    var changed = rows.map(function (r) { return r[2] !== 'same'; });
    var near = rows.map(function (_, i) {
      for (var j = Math.max(0, i - CONTEXT); j <= Math.min(rows.length - 1, i + CONTEXT); j++) { if (changed[j]) return true; }
      return false;
    });
    var n = changed.filter(Boolean).length;
    add(body, 'div', { 'class': 'none' }, n + ' of ' + rows.length + ' lines differ · ' + stageLabel(STAGES[a]) + ' (left) → ' + stageLabel(STAGES[b]) + ' (right)');
    var table = add(body, 'table', { 'class': 'sbs' }), tb = add(table, 'tbody'), tB = tables(b);
    var i = 0;
    while (i < rows.length) {
      if (!near[i]) {
        var j = i;
        while (j < rows.length && !near[j]) j++;
        gap(tb, rows.slice(i, j));
        i = j;
        continue;
      }
      line(tb, rows[i]);
      i++;
    }
    function line(parent, r, before) {
      var tr = el('tr', { 'class': r[2] });
      add(tr, 'td', { 'class': 'no' }, r[0] >= 0 ? String(r[0] + 1) : '');
      add(tr, 'td', { 'class': 'tx l' }, r[0] >= 0 ? A[r[0]] : '');
      add(tr, 'td', { 'class': 'no' }, r[1] >= 0 ? String(r[1] + 1) : '');
      add(tr, 'td', { 'class': 'tx r' }, r[1] >= 0 ? B[r[1]] : '');
      var node = r[1] >= 0 ? tB.byLine[r[1] + 1] : null;
      if (node) tr.addEventListener('click', function () { closeSheets(); selectNode(node, true); });
      parent.insertBefore(tr, before || null);
    }
    function gap(parent, hidden) {
      var tr = add(parent, 'tr', { 'class': 'gap' });
      add(tr, 'td', { colspan: 4 }, '⋯ ' + hidden.length + ' unchanged line' + (hidden.length === 1 ? '' : 's') + ' (click to show)');
      tr.addEventListener('click', function () {
        hidden.forEach(function (r) { line(parent, r, tr); });
        parent.removeChild(tr);
      });
    }
  }
  function openDiff() {
    $('diff-b').value = S.stage;
    $('diff-a').value = Math.max(0, S.stage - 1);
    $('diff').hidden = false;
    showDiff();
  }

  // -- ONNX models: what one holds, and how to draw it --------------------------------------------
  function showOnnx(o) {
    var body = $('onnx-body');
    clear(body);
    $('onnx-title').textContent = o.path;
    var tab = add(body, 'table', { 'class': 'kv' });
    if (o.bytes !== undefined) row(tab, 'size', kb(o.bytes));
    if (o.producer) row(tab, 'producer', o.producer);
    if (o.opset) row(tab, 'opset', o.opset);
    if (o.nodes !== undefined) row(tab, 'nodes', o.nodes + (o.all_nodes > o.nodes ? ' (' + o.all_nodes + ' with the Loop bodies)' : ''));
    if (o.initializers !== undefined) row(tab, 'initializers', String(o.initializers));
    (o.inputs || []).forEach(function (x) { row(tab, 'input', x); });
    (o.outputs || []).forEach(function (x) { row(tab, 'output', x); });
    Object.keys(o.metadata || {}).forEach(function (k) { row(tab, k, o.metadata[k]); });
    if (o.error) row(tab, 'error', o.error);
    var graph = o.metadata && o.metadata['irc.graph'], last = STAGES.length - 1;
    if (graph && tables(last).list.some(function (n) { return n.g === graph; })) {
      var p = add(body, 'p');
      p.appendChild(document.createTextNode('Lowered from '));
      var a = add(p, 'a', null, '@' + graph + ' in ' + stageLabel(STAGES[last]));
      a.addEventListener('click', function () {
        closeSheets();
        var first = tables(last).list.filter(function (n) { return n.g === graph; })[0];
        showStage(last);
        selectNode(first, true);
      });
    }
    if (o.ops && o.ops.length) {
      var ops = add(section(body, 'Operators'), 'table', { 'class': 'kv' });
      o.ops.slice(0, 40).forEach(function (x) { row(ops, x[0], '×' + x[1]); });
    }
    var hint = section(body, 'Draw it');
    var path = decodeURIComponent(new URL(o.path, location.href).pathname);
    add(hint, 'pre', { 'class': 'cmd' }, 'irc view ' + path);
    add(hint, 'p', { 'class': 'hint' }, 'draws every node with its attributes, types and irc\'s source metadata on a page like this one; Netron and model-explorer open the file too.');
    add(add(hint, 'p'), 'a', { href: o.path, download: '' }, 'download the file');
    $('onnx-sheet').hidden = false;
  }
  function closeSheets() { $('diff').hidden = true; $('onnx-sheet').hidden = true; }

  // -- resizable panes ------------------------------------------------------------------------
  function splitter(id, apply) {
    var s = $(id);
    s.addEventListener('pointerdown', function (ev) {
      ev.preventDefault();
      s.setPointerCapture(ev.pointerId);
      function move(e) { apply(e); }
      function up() { s.removeEventListener('pointermove', move); s.removeEventListener('pointerup', up); }
      s.addEventListener('pointermove', move);
      s.addEventListener('pointerup', up);
    });
  }
  function wireSplitters() {
    var main = $('main'), right = $('right-pane');
    function set(name, px) { main.style.setProperty(name, Math.round(px) + 'px'); }
    splitter('split-side', function (e) {
      var r = main.getBoundingClientRect();
      set('--side-w', clamp(e.clientX - r.left, 120, r.width / 2));
    });
    splitter('split-right', function (e) {
      var r = main.getBoundingClientRect();
      set('--right-w', clamp(r.right - e.clientX, 200, r.width - 320));
    });
    splitter('split-details', function (e) {
      var r = right.getBoundingClientRect();
      set('--details-h', clamp(e.clientY - r.top, 40, r.height - 80));
    });
  }

  // -- the address: #stage=N&node=GRAPH/NAME ---------------------------------------------------
  function updateHash() {
    var h = '#stage=' + STAGES[S.stage].index;
    if (S.sel && S.sel.stage === S.stage) h += '&node=' + encodeURIComponent(S.sel.g + '/' + S.sel.n);
    if (location.hash !== h && history.replaceState) history.replaceState(null, '', h);
  }
  function readHash() {
    var p = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      var i = kv.indexOf('=');
      if (i > 0) { try { p[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1)); } catch (e) { /* a bad escape: ignore it */ } }
    });
    return p;
  }
  // A stage by its number (the NN of NN_<pass>.ir), else by its position.
  function stageOf(v) {
    for (var i = 0; i < STAGES.length; i++) { if (String(STAGES[i].index) === String(+v)) return i; }
    return +v >= 0 && +v < STAGES.length ? +v : 0;
  }
  function findNode(i, text) {
    var t = tables(i), slash = text.indexOf('/');
    if (slash > 0) {
      var node = t.byKey[nodeKey(text.slice(0, slash), text.slice(slash + 1))];
      if (node) return node;
    }
    for (var k = 0; k < t.list.length; k++) {
      var n = t.list[k];
      if (n.n === text || 'N-' + n.g + '-' + n.n === text) return n;
    }
    return null;
  }
  function openHash(p) {
    p = p && p.stage !== undefined ? p : readHash();
    var i = 'stage' in p ? stageOf(p.stage) : 0;
    if (i !== S.stage) showStage(i);
    var node = p.node ? findNode(i, p.node) : null;
    if (node) selectNode(node, true);
  }

  // -- wiring --------------------------------------------------------------------------------------
  function onKey(ev) {
    var tag = ev.target && ev.target.tagName, sheet = !$('diff').hidden || !$('onnx-sheet').hidden;
    if (ev.key === 'Escape') {
      if (sheet) { closeSheets(); return; }
      if (tag === 'INPUT') { ev.target.blur(); return; }
      var v = STAGES[S.stage].views[viewKey()];
      if (v && v.parent !== null && v.parent !== undefined) showView(v.parent);
      return;
    }
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || ev.ctrlKey || ev.metaKey || ev.altKey || sheet) return;
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
    wirePanZoom();
    wireSplitters();
    $('prev').addEventListener('click', function () { showStage(S.stage - 1); });
    $('next').addEventListener('click', function () { showStage(S.stage + 1); });
    $('graph').addEventListener('click', onGraphClick);
    $('ir').addEventListener('click', onIrClick);
    $('zoom-in').addEventListener('click', function () { zoom(1.25); });
    $('zoom-out').addEventListener('click', function () { zoom(0.8); });
    $('zoom-fit').addEventListener('click', function () { zoom(0); });
    var search = $('search');
    search.addEventListener('input', function () { S.query = search.value; S.hit = -1; applySearch(false); });
    search.addEventListener('focus', showResults);
    search.addEventListener('blur', function () { $('search-results').hidden = true; });
    search.addEventListener('keydown', function (ev) {
      if (ev.key === 'Enter') { ev.preventDefault(); if (S.hit < 0) applySearch(true); else nextHit(ev.shiftKey ? -1 : 1); }
      else if (ev.key === 'ArrowDown') { ev.preventDefault(); nextHit(1); }
      else if (ev.key === 'ArrowUp') { ev.preventDefault(); nextHit(-1); }
    });
    $('diff-open').addEventListener('click', openDiff);
    $('diff-close').addEventListener('click', closeSheets);
    $('onnx-close').addEventListener('click', closeSheets);
    $('diff-a').addEventListener('change', showDiff);
    $('diff-b').addEventListener('change', showDiff);
    $('diff-tab-nodes').addEventListener('click', function () { DIFF_TAB = 'nodes'; showDiff(); });
    $('diff-tab-ir').addEventListener('click', function () { DIFF_TAB = 'ir'; showDiff(); });
    ['diff', 'onnx-sheet'].forEach(function (id) {
      $(id).addEventListener('click', function (ev) { if (ev.target === $(id)) closeSheets(); });
    });
    document.addEventListener('keydown', onKey);
    window.addEventListener('hashchange', function () { openHash(); });
    var asked = readHash();   // before showStage rewrites the address
    S.stage = -1;
    showStage(stageOf(asked.stage || 0));
    openHash(asked);
  }

  // A small API for tests and for the console.
  window.irc = {
    data: DATA, state: S, showStage: showStage, showView: showView, fit: fit,
    selectNode: function (g, n) { var t = tables(S.stage).byKey[nodeKey(g, n)]; if (t) selectNode(t, true); return !!t; },
    search: function (q) { $('search').value = q; S.query = q; S.hit = -1; applySearch(false); return S.hits.length; },
    hits: function () { return S.hits.map(function (n) { return n.g + '/' + n.n; }); },
    camera: function () { return VIEW && VIEW.cam ? { x: VIEW.cam.x, y: VIEW.cam.y, s: VIEW.cam.s, fit: fitScale(), w: VIEW.w, h: VIEW.h, room: room() } : null; },
    diff: function (a, b) {
      var d = diffStages(a, b), out = {};
      for (var k in d) out[k] = d[k].map(function (e) { return e.node.g + '/' + e.node.n; });
      return out;
    },
    changes: function (a, b) {
      var d = diffStages(a, b), out = {};
      d.changed.concat(d.moved).forEach(function (e) { out[e.node.g + '/' + e.node.n] = e.changes; });
      return out;
    },
    sideBySide: function (a, b) { return sideRows(irLines(a), irLines(b)); }
  };
  init();
})();
