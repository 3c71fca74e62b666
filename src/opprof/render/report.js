/* report.js - the explorable timeline of opprof's HTML report (html_timeline.c
 * embeds it in the page; the page needs no network). Data: window.OPPROF_TL,
 * written by html_timeline.c: per event its start and duration (us from the
 * capture's start), name index, thread index and parent index (-1: none),
 * sorted by thread, then start, then longer first (parents first).
 *
 * Wheel or W/S: zoom around the cursor; drag or A/D: pan; the search box
 * dims every box whose name does not contain the text; the thread boxes hide
 * tracks; a click on a box shows its details. Boxes narrower than a pixel are
 * drawn one pixel per column, so a redraw costs O(pixels), not O(events).
 * The flame graph zooms into a box on click (a click on its background: back).
 * With #selftest in the address, the page zooms and searches by itself and
 * writes its timings into <pre id="opprof-selftest"> (tests/browser_test.sh). */
(function () {
  'use strict';
  var D = window.OPPROF_TL;
  var started = performance.now();
  setupFlame();
  if (!D) return;
  var n = D.s.length;
  var S = Float64Array.from(D.s), DUR = Float64Array.from(D.d);
  var NAME = Int32Array.from(D.n), THREAD = Int32Array.from(D.t), PARENT = Int32Array.from(D.p);
  var DEPTH = new Int32Array(n), SELF = Float64Array.from(DUR);
  var i, t;
  for (i = 0; i < n; i++) {
    if (PARENT[i] >= 0) {
      DEPTH[i] = DEPTH[PARENT[i]] + 1;
      SELF[PARENT[i]] -= DUR[i];
    }
  }
  var ROW = 14, HEAD = 16, CHART = 60;
  var tracks = D.threads.map(function (label) { return {label: label, hidden: false, rows: [], maxDur: []}; });
  var count = tracks.map(function () { return []; });
  for (i = 0; i < n; i++) {
    t = count[THREAD[i]];
    t[DEPTH[i]] = (t[DEPTH[i]] || 0) + 1;
  }
  tracks.forEach(function (tr, k) {
    for (var d = 0; d < count[k].length; d++) {
      tr.rows[d] = new Int32Array(count[k][d] || 0);
      tr.maxDur[d] = 0;
      count[k][d] = 0;
    }
  });
  for (i = 0; i < n; i++) {
    t = tracks[THREAD[i]];
    var d = DEPTH[i];
    t.rows[d][count[THREAD[i]][d]++] = i;
    if (DUR[i] > t.maxDur[d]) t.maxDur[d] = DUR[i];
  }

  var canvas = document.getElementById('tl-canvas');
  var ctx = canvas.getContext('2d', {willReadFrequently: location.hash === '#selftest'});
  var detail = document.getElementById('tl-detail'), search = document.getElementById('tl-search');
  var view0 = 0, view1 = D.span > 0 ? D.span : 1, match = null, selected = -1;
  var colours = D.names.map(function (name) {
    var h = 2166136261;
    for (var c = 0; c < name.length; c++) h = Math.imul(h ^ name.charCodeAt(c), 16777619) >>> 0;
    var warm = name.indexOf('aten::') === 0 || name.indexOf('::') > 0;
    return 'hsl(' + (warm ? h % 50 : 190 + h % 60) + ',' + (60 + (h >>> 8) % 25) + '%,' + (55 + (h >>> 16) % 15) + '%)';
  });

  function layout() {
    var y = 0;
    tracks.forEach(function (tr) {
      tr.top = y;
      y += tr.hidden ? 0 : HEAD + tr.rows.length * ROW;
    });
    return y;
  }

  function firstFrom(row, maxDur, t0) { /* the first index of row that may end after t0 */
    var lo = 0, hi = row.length, from = t0 - maxDur;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (S[row[mid]] < from) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  function drawRow(row, maxDur, y, scale, width) {
    var k = firstFrom(row, maxDur, view0), lastPixel = -1;
    while (k < row.length) {
      var e = row[k], x0 = (S[e] - view0) * scale;
      if (x0 > width) break;
      var x1 = (S[e] + DUR[e] - view0) * scale;
      if (x1 < 0) { k++; continue; }
      var dim = match && !match[NAME[e]];
      ctx.globalAlpha = dim ? 0.15 : 1;
      ctx.fillStyle = e === selected ? '#000' : colours[NAME[e]];
      if (x1 - x0 < 1) { /* under a pixel: one pixel for the column, then skip past it */
        var px = Math.floor(x0);
        if (px !== lastPixel) ctx.fillRect(px, y, 1, ROW - 1);
        lastPixel = px;
        var next = view0 + (px + 1) / scale, lo = k + 1, hi = row.length;
        while (lo < hi) {
          var mid = (lo + hi) >> 1;
          if (S[row[mid]] < next) lo = mid + 1; else hi = mid;
        }
        /* boxes of a row do not overlap: only the last one starting in this
         * column can reach past it; go to it (or on, if that is e) */
        k = lo - 1 > k ? lo - 1 : k + 1;
        continue;
      }
      var left = Math.max(x0, 0), w = Math.min(x1, width) - left;
      ctx.fillRect(left, y, Math.max(w, 1), ROW - 1);
      if (w > 30) {
        ctx.fillStyle = '#000';
        ctx.fillText(D.names[NAME[e]].slice(0, Math.floor((w - 4) / 6.5)), left + 2, y + 10);
      }
      k++;
    }
    ctx.globalAlpha = 1;
  }

  function drawSeries(series, top, scale, width, label) {
    var xs = series.t, vs = series.v, high = 0, low = Infinity;
    for (var j = 0; j < vs.length; j++) { high = Math.max(high, vs[j]); low = Math.min(low, vs[j]); }
    var range = high > low ? high - low : 1;
    ctx.fillStyle = '#eef';
    ctx.fillRect(0, top, width, CHART - 4);
    ctx.strokeStyle = '#36c';
    ctx.beginPath();
    var y = top + CHART - 6, started = false; /* a step line: a value holds until the next */
    for (j = 0; j < xs.length; j++) {
      var x = (xs[j] - view0) * scale, ny = top + CHART - 6 - (vs[j] - low) * (CHART - 10) / range;
      if (x > width) break;
      if (x < 0) { y = ny; continue; }
      if (!started) { ctx.moveTo(0, y); started = true; }
      ctx.lineTo(x, y);
      ctx.lineTo(x, ny);
      y = ny;
    }
    if (!started) ctx.moveTo(0, y);
    ctx.lineTo(width, y);
    ctx.stroke();
    ctx.fillStyle = '#000';
    ctx.fillText(label + ' (max ' + high.toLocaleString() + ')', 4, top + 12);
  }

  /* Off the CPU: a grey band under the track's label; samples: a tick each. */
  function drawCpuMarks(scale, width) {
    var off = D.off || [], smp = D.smp || [];
    ctx.fillStyle = '#bbb';
    for (var i = 0; i + 2 < off.length; i += 3) {
      var tr = tracks[off[i]];
      if (!tr || tr.hidden || off[i + 1] > view1 || off[i + 1] + off[i + 2] < view0) continue;
      var x0 = Math.max(0, (off[i + 1] - view0) * scale), x1 = Math.min(width, (off[i + 1] + off[i + 2] - view0) * scale);
      ctx.fillRect(x0, tr.top + HEAD - 4, Math.max(1, x1 - x0), 3);
    }
    ctx.fillStyle = '#c33';
    for (var j = 0; j + 1 < smp.length; j += 2) {
      var ts = tracks[smp[j]];
      if (!ts || ts.hidden || smp[j + 1] < view0 || smp[j + 1] > view1) continue;
      ctx.fillRect((smp[j + 1] - view0) * scale, ts.top + HEAD - 4, 1, 3);
    }
  }

  function draw() {
    var tracksHeight = layout(), width = canvas.clientWidth || 1200, height = tracksHeight + D.series.length * CHART;
    var ratio = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
      canvas.style.height = height + 'px';
    }
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = '10px monospace';
    var scale = width / (view1 - view0);
    tracks.forEach(function (tr) {
      if (tr.hidden) return;
      ctx.fillStyle = '#444';
      ctx.fillText(tr.label, 2, tr.top + 11);
      for (var dpt = 0; dpt < tr.rows.length; dpt++) drawRow(tr.rows[dpt], tr.maxDur[dpt], tr.top + HEAD + dpt * ROW, scale, width);
    });
    drawCpuMarks(scale, width);
    var top = tracksHeight;
    D.series.forEach(function (s) { drawSeries(s, top, scale, width, s.name); top += CHART; });
    document.getElementById('tl-range').textContent =
      fmt(view0) + ' to ' + fmt(view1) + ' (' + fmt(view1 - view0) + ' across)';
  }

  function fmt(us) {
    return us >= 1e6 ? (us / 1e6).toFixed(3) + ' s' : us >= 1e3 ? (us / 1e3).toFixed(3) + ' ms' : us.toFixed(3) + ' us';
  }

  function zoom(factor, at) { /* at: a fraction of the width */
    var span = view1 - view0, t0 = view0 + span * at, ns = Math.max(span * factor, 0.001);
    view0 = t0 - ns * at;
    view1 = view0 + ns;
    clampView();
    draw();
  }

  function pan(fraction) {
    var span = view1 - view0;
    view0 += span * fraction;
    view1 += span * fraction;
    clampView();
    draw();
  }

  function clampView() {
    var span = view1 - view0, total = D.span > 0 ? D.span : 1;
    if (span > total) { view0 = 0; view1 = total; return; }
    if (view0 < 0) { view0 = 0; view1 = span; }
    if (view1 > total) { view1 = total; view0 = total - span; }
  }

  function hit(x, y) {
    var width = canvas.clientWidth || 1200, at = view0 + x * (view1 - view0) / width, found = -1;
    tracks.forEach(function (tr) {
      if (tr.hidden || y < tr.top + HEAD || y >= tr.top + HEAD + tr.rows.length * ROW) return;
      var dpt = Math.floor((y - tr.top - HEAD) / ROW), row = tr.rows[dpt], slack = (view1 - view0) / width;
      for (var k = firstFrom(row, tr.maxDur[dpt], at - slack); k < row.length && S[row[k]] <= at + slack; k++)
        if (S[row[k]] + DUR[row[k]] >= at - slack) found = row[k];
    });
    return found;
  }

  function show(e) {
    selected = e;
    if (e < 0) { detail.textContent = ''; draw(); return; }
    var lines = [D.names[NAME[e]], 'start ' + fmt(S[e]) + ', duration ' + fmt(DUR[e]) + ', self ' + fmt(SELF[e]),
                 'thread ' + D.threads[THREAD[e]]];
    if (D.args[e]) lines.push('args: ' + D.args[e]);
    if (D.shapes[e]) lines.push('input shapes: ' + D.shapes[e]);
    if (D.mem[e]) lines.push('memory: ' + D.mem[e]);
    var stack = [];
    for (var p = e; p >= 0; p = PARENT[p]) stack.push(D.names[NAME[p]] + (D.sites[p] ? ' (' + D.sites[p] + ')' : ''));
    lines.push('call stack: ' + stack.join(' < '));
    detail.textContent = lines.join('\n');
    draw();
  }

  function setMatch(text) {
    match = null;
    if (text) {
      match = new Uint8Array(D.names.length);
      var low = text.toLowerCase();
      D.names.forEach(function (name, k) { match[k] = name.toLowerCase().indexOf(low) >= 0 ? 1 : 0; });
    }
    draw();
  }

  var drag = null;
  canvas.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    zoom(ev.deltaY > 0 ? 1.25 : 0.8, ev.offsetX / (canvas.clientWidth || 1200));
  }, {passive: false});
  canvas.addEventListener('mousedown', function (ev) { drag = {x: ev.offsetX, v0: view0, moved: false}; });
  window.addEventListener('mouseup', function (ev) {
    if (drag && !drag.moved && ev.target === canvas) show(hit(ev.offsetX, ev.offsetY));
    drag = null;
  });
  canvas.addEventListener('mousemove', function (ev) {
    if (!drag) return;
    var dx = ev.offsetX - drag.x;
    if (Math.abs(dx) > 2) drag.moved = true;
    var span = view1 - view0;
    view0 = drag.v0 - dx * span / (canvas.clientWidth || 1200);
    view1 = view0 + span;
    clampView();
    draw();
  });
  window.addEventListener('keydown', function (ev) {
    if (ev.target === search) return;
    var k = ev.key.toLowerCase();
    if (k === 'w') zoom(0.8, 0.5);
    else if (k === 's') zoom(1.25, 0.5);
    else if (k === 'a') pan(-0.2);
    else if (k === 'd') pan(0.2);
  });
  search.addEventListener('input', function () { setMatch(search.value); });
  var boxes = document.getElementById('tl-threads');
  tracks.forEach(function (tr) {
    var label = document.createElement('label'), box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = true;
    box.onchange = function () { tr.hidden = !box.checked; draw(); };
    label.appendChild(box);
    label.appendChild(document.createTextNode(' ' + tr.label + ' '));
    boxes.appendChild(label);
  });
  draw();
  var loaded = performance.now(); /* since the navigation started: reading the page, the data, the first drawing */

  if (location.hash === '#selftest') selftest(loaded);

  function pixels() { /* a checksum of what is drawn */
    var data = ctx.getImageData(0, 0, canvas.width, canvas.height).data, h = 0;
    for (var j = 0; j < data.length; j += 4) h = (Math.imul(h, 31) + data[j] + data[j + 1] * 3 + data[j + 3] * 7) >>> 0;
    return h;
  }

  function selftest(loadMs) {
    var before = pixels(), t0 = performance.now();
    zoom(0.1, 0.5);
    var zoomMs = performance.now() - t0, zoomed = pixels();
    var counts = new Int32Array(D.names.length);
    for (var j = 0; j < n; j++) counts[NAME[j]]++;
    var often = 0;
    for (j = 1; j < counts.length; j++) if (counts[j] > counts[often]) often = j;
    t0 = performance.now();
    setMatch(D.names[often]);
    var searchMs = performance.now() - t0, searched = pixels();
    var out = document.getElementById('opprof-selftest');
    out.textContent = JSON.stringify({events: n, load_ms: loadMs, viewer_setup_ms: loadMs - started,
      zoom_redraw_ms: zoomMs, search_redraw_ms: searchMs,
      zoom_changed: zoomed !== before, search_changed: searched !== zoomed});
  }

  function setupFlame() { /* click a box: it fills the width; click the background: back */
    document.querySelectorAll('svg.flame').forEach(function (svg) {
      var W = svg.viewBox.baseVal.width;
      var parts = Array.prototype.map.call(svg.querySelectorAll('g'), function (g) {
        var r = g.querySelector('rect'), tx = g.querySelector('text');
        return {g: g, r: r, t: tx, x: +r.getAttribute('x'), w: +r.getAttribute('width'), y: +r.getAttribute('y')};
      });
      function focus(x0, w, y0) {
        parts.forEach(function (p) {
          var inside = p.x + p.w > x0 + 1e-9 && p.x < x0 + w - 1e-9 && (p.y >= y0 || (p.x <= x0 && p.x + p.w >= x0 + w));
          p.g.style.display = inside ? '' : 'none';
          var nx = (p.x - x0) * W / w, nw = p.w * W / w;
          p.r.setAttribute('x', Math.max(nx, 0));
          p.r.setAttribute('width', Math.min(nw, W));
          if (p.t) {
            p.t.setAttribute('x', Math.max(nx, 0) + 3);
            p.t.style.display = nw > 40 ? '' : 'none';
          }
        });
      }
      svg.addEventListener('click', function (ev) {
        var r = ev.target.closest('rect');
        var p = r && parts.find(function (q) { return q.r === r; });
        if (p) focus(p.x, p.w, p.y); else focus(0, W, 0);
      });
    });
  }
})();
