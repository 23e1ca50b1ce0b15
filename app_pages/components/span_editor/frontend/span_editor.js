/* Span editor: a Streamlit custom component written by hand (no build step, no external script).

   Protocol (Streamlit components API v1, as streamlit-component-lib implements it):
   - to the page: window.parent.postMessage({isStreamlitMessage: true, type, ...data}, "*") with
     type "streamlit:componentReady" {apiVersion: 1}, "streamlit:setComponentValue"
     {value, dataType: "json"} and "streamlit:setFrameHeight" {height};
   - from the page: {type: "streamlit:render", args, disabled, theme} messages.

   The browser id: 32 random hex digits made once (crypto.getRandomValues) and kept in the
   browser's localStorage (the frame is same-origin with the app: Streamlit's sandbox allows it),
   sent as "browser" with every value, so that the page can keep unsaved edits per browser and
   find them again after a reload. Where storage is blocked (a sandbox without same-origin,
   privacy settings) the id is null: the editor works, drafts just do not survive a reload.

   Suggested spans (drawn dashed, accepted or rejected) are in span_editor_suggestions.js.

   Every string from data is set with textContent / title (never innerHTML); colours are the
   palette classes c0..c13 (cblue_core/render/palette.py), chosen by an index the Python side
   computes, never a colour value from data.
*/
(function () {
  "use strict";

  var TOP_EM = 1.5;      // first bar, from the character's top (as cblue_core/render/spans.py)
  var STEP_EM = 1.05;    // distance between levels
  var PALETTE_SIZE = 14;
  var LABEL_MAX_EM = 8;  // the widest bar label, in characters of the text (see labelWidth)
  var BROWSER_KEY = "cblue-studio.span-editor.browser";
  var BROWSER_RE = /^[0-9a-f]{32}$/;
  var HELP = "拖动鼠标选择字符新建片段，点击片段可改类型或删除 / Drag over characters to mark a " +
    "span, click a span to retype or delete it · 1-9 type · Delete · Ctrl+S save · Ctrl+Z undo · " +
    "Alt+←/→ previous/next · Esc clear";

  var root = document.getElementById("root");
  var typesEl = document.getElementById("types");
  var textEl = document.getElementById("text");
  var listEl = document.getElementById("list");
  var statusEl = document.getElementById("status");
  var suggEl = document.getElementById("sugg");

  // This browser's id (see the header), or null when the browser keeps no storage for the frame.
  function browserId() {
    try {
      var store = window.localStorage;
      if (!store) return null;
      var id = store.getItem(BROWSER_KEY);
      if (id && BROWSER_RE.test(id)) return id;
      if (!window.crypto || !window.crypto.getRandomValues) return null;
      var bytes = new Uint8Array(16);
      window.crypto.getRandomValues(bytes);
      id = Array.prototype.map.call(bytes, function (b) { return (b < 16 ? "0" : "") + b.toString(16); }).join("");
      store.setItem(BROWSER_KEY, id);
      return store.getItem(BROWSER_KEY) === id ? id : null;
    } catch (e) {
      return null;                 // SecurityError (no storage in this frame), quota, ...
    }
  }

  var S = {
    ready: false, browser: browserId(), readonly: false,
    argsSig: null, text: "", chars: [], doc: null, types: [], typesSig: "", big: false, disabled: false,
    spans: [], levels: [], undo: [],
    selected: -1, pending: null,
    drag: null,
    // Starts from the clock so that a recreated iframe never repeats a nonce the page has seen.
    nonce: Date.now(), lastSent: null, sent: {},
    status: HELP, statusErr: false
  };
  var SG = window.SpanEditorSuggestions({
    S: S, toInt: toInt, cmpSpan: cmpSpan, el: el, mention: mention, shortName: shortName, longName: longName,
    colourOf: colourOf, offsetText: offsetText, setStatus: setStatus, render: render, emit: emit,
    pushUndo: pushUndo, refuseReadonly: refuseReadonly
  });

  // ------------------------------------------------------------------ protocol
  function send(type, data) {
    var msg = {isStreamlitMessage: true, type: type};
    for (var k in data) { if (Object.prototype.hasOwnProperty.call(data, k)) msg[k] = data[k]; }
    window.parent.postMessage(msg, "*");
  }

  var lastHeight = -1;
  function setHeight() {
    var h = Math.ceil(root.getBoundingClientRect().height) + 4;
    if (h !== lastHeight) {
      lastHeight = h;
      send("streamlit:setFrameHeight", {height: h});
    }
  }

  function emit(action) {
    S.nonce += 1;
    S.lastSent = S.nonce;
    S.sent[S.nonce] = true;
    send("streamlit:setComponentValue", {
      value: {spans: copySpans(S.spans), action: action, nonce: S.nonce, doc: S.doc, browser: S.browser,
              accepted: SG.lists().accepted, rejected: SG.lists().rejected},
      dataType: "json"
    });
  }

  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) return;
    var d = event.data;
    if (!d || typeof d !== "object" || d.type !== "streamlit:render") return;
    onRender(d.args || {}, !!d.disabled);
  });

  // ------------------------------------------------------------------ data
  function toInt(v) {
    var n = Number(v);
    return (typeof v === "number" || typeof v === "string") && isFinite(n) && Math.floor(n) === n ? n : null;
  }

  function cmpSpan(a, b) {
    if (a.start !== b.start) return a.start - b.start;
    if (a.end !== b.end) return b.end - a.end;
    return a.type < b.type ? -1 : (a.type > b.type ? 1 : 0);
  }

  function normSpans(raw, n) {
    var out = [], seen = {};
    if (!Array.isArray(raw)) return out;
    raw.forEach(function (s) {
      if (!s || typeof s !== "object") return;
      var a = toInt(s.start), b = toInt(s.end), t = s.type == null ? "" : String(s.type);
      if (a === null || b === null || a < 0 || b > n || a >= b) return;
      var k = a + ":" + b + ":" + t;
      if (seen[k]) return;
      seen[k] = true;
      out.push({start: a, end: b, type: t});
    });
    return out.sort(cmpSpan);
  }

  function copySpans(spans) {
    return spans.map(function (s) { return {start: s.start, end: s.end, type: s.type}; });
  }

  function sameSpans(a, b) {
    if (a.length !== b.length) return false;
    for (var i = 0; i < a.length; i++) {
      if (a[i].start !== b[i].start || a[i].end !== b[i].end || a[i].type !== b[i].type) return false;
    }
    return true;
  }

  function normTypes(raw) {
    var out = [], seen = {};
    if (!Array.isArray(raw)) return out;
    raw.forEach(function (t, i) {
      if (!t || typeof t !== "object" || t.code == null) return;
      var code = String(t.code);
      if (seen[code]) return;
      seen[code] = true;
      var c = toInt(t.colour);
      if (c === null) c = i;
      out.push({code: code, zh: t.zh == null ? "" : String(t.zh), en: t.en == null ? "" : String(t.en),
                colour: ((c % PALETTE_SIZE) + PALETTE_SIZE) % PALETTE_SIZE});
    });
    return out;
  }

  function typeOf(code) {
    for (var i = 0; i < S.types.length; i++) if (S.types[i].code === code) return S.types[i];
    return null;
  }

  function crc32(str) {  // colour of a type the page did not list (stable, like palette.py)
    var c, crc = 0xFFFFFFFF, bytes = unescape(encodeURIComponent(str));
    for (var i = 0; i < bytes.length; i++) {
      c = (crc ^ bytes.charCodeAt(i)) & 0xFF;
      for (var k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xEDB88320 : c >>> 1;
      crc = (crc >>> 8) ^ c;
    }
    return (crc ^ 0xFFFFFFFF) >>> 0;
  }

  function colourOf(code) {
    var t = typeOf(code);
    return "c" + (t ? t.colour : crc32(code) % PALETTE_SIZE);
  }

  function labelWidth(s) {
    var em = 0.45;
    Array.from(s).forEach(function (ch) { em += ch.codePointAt(0) > 0x2E7F ? 0.58 : 0.36; });
    // span_editor.css cuts a label at 12em of its .58em font: with its padding, under 8em of the text
    return Math.min(LABEL_MAX_EM, Math.max(1, Math.ceil(em - 1e-9)));
  }

  function shortName(code) {
    var t = typeOf(code);
    if (t && t.zh && (S.big || labelWidth(t.zh) < labelWidth(code))) return t.zh;
    return code;
  }

  function longName(code) {
    var t = typeOf(code);
    if (!t) return code;
    var names = [t.zh, t.en].filter(function (x) { return x && x !== code; });
    return names.length ? names.join(" / ") + " (" + code + ")" : code;
  }

  function mention(s) { return S.chars.slice(s.start, s.end).join(""); }

  // Levels: overlapping spans never share one; shortest first (inner spans nearest the text);
  // a span also keeps clear of the label of a span starting just before it.
  function assignLevels(spans) {
    var widths = spans.map(function (s) { return labelWidth(shortName(s.type)); });
    function reach(i) { return Math.max(spans[i].end, spans[i].start + widths[i]); }
    var order = spans.map(function (_, i) { return i; }).sort(function (i, j) {
      var li = spans[i].end - spans[i].start, lj = spans[j].end - spans[j].start;
      if (li !== lj) return li - lj;
      if (spans[i].start !== spans[j].start) return spans[i].start - spans[j].start;
      return spans[i].type < spans[j].type ? -1 : (spans[i].type > spans[j].type ? 1 : 0);
    });
    var levels = spans.map(function () { return 0; }), placed = [];
    order.forEach(function (i) {
      var r = reach(i), used = {};
      placed.forEach(function (j) {
        if (spans[j].start < r && spans[i].start < reach(j)) used[levels[j]] = true;
      });
      var lvl = 0;
      while (used[lvl]) lvl++;
      levels[i] = lvl;
      placed.push(i);
    });
    return levels;
  }

  // ------------------------------------------------------------------ render from the page
  function onRender(args, disabled) {
    var text = args.text == null ? "" : String(args.text);
    var doc = args.doc == null ? null : String(args.doc);
    var chars = Array.from(text);
    var incoming = normSpans(args.spans, chars.length);
    var echo = toInt(args.echo);
    // Streamlit re-sends the last arguments when it redraws the frame (e.g. right after a value
    // was sent, before the script has rerun): only arguments that changed are news.
    var sig = JSON.stringify([text, doc, incoming, echo]);
    var news = sig !== S.argsSig;
    S.argsSig = sig;
    S.types = normTypes(args.types);
    S.big = !!args.big;
    S.disabled = disabled;
    S.readonly = !!args.readonly;
    S.inclusive = args.offsets === "inclusive";
    var first = !S.ready;

    if (!S.ready || text !== S.text || doc !== S.doc) {
      reset(text, chars, doc, incoming);
    } else if (!news) {
      // the same arguments again: keep the local state
    } else if (echo !== null && S.sent[echo]) {
      // The page shows back a state this editor sent: the latest one (in sync) or an older one
      // (a rerun that started before the newest edit): keep the local state either way.
    } else if (!sameSpans(incoming, S.spans)) {
      reset(text, chars, doc, incoming);
      setStatus("已从页面重新载入 / reloaded from the page", false);
    }
    // What the page did with the last action (a save's outcome), shown once when it is news.
    SG.setArgs(args.suggestions, S.chars.length);
    var noticeSig = JSON.stringify(args.notice == null ? null : args.notice);
    if (noticeSig !== S.noticeSig) {
      S.noticeSig = noticeSig;
      if (Array.isArray(args.notice) && args.notice.length === 2) setStatus(String(args.notice[0]), !!args.notice[1]);
    }
    if (!S.ready) lastHeight = -1;  // heights sent before the page listened were dropped
    S.ready = true;
    render();
    // Tell a page that does not know this browser yet who we are (a reloaded page looks up the
    // unsaved draft of this browser): once per frame, with the spans as the page gave them.
    var known = args.browser == null ? null : String(args.browser);
    if (first && S.browser && known !== S.browser && !S.readonly) emit("hello");
  }

  function reset(text, chars, doc, spans) {
    S.text = text; S.chars = chars; S.doc = doc;
    S.spans = spans; S.undo = []; S.selected = -1; S.pending = null; S.drag = null;
    SG.reset();
    setStatus(HELP, false);
  }

  // ------------------------------------------------------------------ drawing
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  // Offsets as the split declares them: CMeEE's end is inclusive ([18, 21]), others half-open ([18, 22)).
  function offsetText(start, end) {
    return S.inclusive ? "[" + start + ", " + (end - 1) + "]" : "[" + start + ", " + end + ")";
  }

  function setStatus(msg, isErr) {
    S.status = msg; S.statusErr = !!isErr;
    statusEl.textContent = msg;
    statusEl.className = "se-status" + (isErr ? " se-err" : "");
  }

  function renderTypes() {
    var sig = JSON.stringify(S.types);
    if (sig !== S.typesSig) {
      S.typesSig = sig;
      typesEl.textContent = "";
      if (!S.types.length) typesEl.appendChild(el("span", "se-status", "没有可用类型 / no types"));
      S.types.forEach(function (t, i) {
        var b = el("button", "se-type c" + t.colour);
        b.type = "button";
        b.dataset.code = t.code;
        if (i < 9) b.appendChild(el("span", "se-key", String(i + 1)));
        b.appendChild(el("span", "se-zh", t.zh || t.code));
        if (t.en) b.appendChild(document.createTextNode(" " + t.en));
        if (t.zh && t.zh !== t.code) b.appendChild(el("span", "se-code", t.code));
        b.title = longName(t.code) + (i < 9 ? " · key " + (i + 1) : "");
        b.addEventListener("mousedown", function (e) { e.preventDefault(); });
        b.addEventListener("click", function () { chooseType(t.code); });
        typesEl.appendChild(b);
      });
    }
    var armed = S.pending !== null || S.selected >= 0;
    var current = S.selected >= 0 ? S.spans[S.selected].type : null;
    Array.prototype.forEach.call(typesEl.querySelectorAll("button"), function (b) {
      b.classList.toggle("se-armed", armed && !S.readonly && (current === null || b.dataset.code === current));
      b.disabled = S.readonly;
    });
  }

  function render() {
    root.classList.toggle("se-big", S.big);
    renderTypes();
    // the spans, then the visible suggestions (k >= S.spans.length): laid out together, never
    // on one level where they overlap
    var spans = S.spans.concat(SG.visible());
    S.levels = assignLevels(spans);
    textEl.textContent = "";
    var covering = S.chars.map(function () { return []; });
    spans.forEach(function (s, k) { for (var i = s.start; i < s.end; i++) covering[i].push(k); });
    var frag = document.createDocumentFragment();
    S.chars.forEach(function (ch, i) {
      var c = el("span", "se-ch");
      c.appendChild(el("span", "se-g", ch));
      c.dataset.i = String(i);
      if (ch === "\n" || ch === "\r") c.classList.add("se-nl");
      var act = covering[i];
      if (act.length) {
        var deepest = 0, tips = [];
        act.sort(function (a, b) { return S.levels[a] - S.levels[b]; });
        act.forEach(function (k) {
          var s = spans[k], lvl = S.levels[k];
          deepest = Math.max(deepest, lvl);
          var bar = el("span", "se-bar " + colourOf(s.type));
          bar.dataset.k = String(k);
          bar.style.top = (TOP_EM + lvl * STEP_EM).toFixed(2) + "em";
          if (s.start === i) bar.classList.add("se-bs");
          if (s.end - 1 === i) bar.classList.add("se-be");
          if (k === S.selected) bar.classList.add("se-sel");
          var tip = longName(s.type) + ": " + mention(s), label = shortName(s.type);
          bar.title = tip;
          if (k >= S.spans.length) label = SG.bar(s, bar);
          tips.push(bar.title);
          if (s.start === i) bar.appendChild(el("span", "se-lbl", label));
          c.appendChild(bar);
        });
        c.style.paddingBottom = (TOP_EM - 0.7 + deepest * STEP_EM + 0.25).toFixed(2) + "em";
        c.title = tips.join("\n");
      }
      frag.appendChild(c);
    });
    textEl.appendChild(frag);
    fitLabels();
    paintMarks();
    renderList();
    document.getElementById("b-undo").disabled = S.readonly || !S.undo.length;
    document.getElementById("b-del").disabled = S.readonly || S.selected < 0;
    document.getElementById("b-save").disabled = S.readonly;
    setHeight();
  }

  // A bar label starting near the right edge is cut there (ellipsis; the bar's title has the
  // full name) instead of widening the frame. All reads first, then all writes: one layout.
  function fitLabels() {
    var labels = Array.prototype.slice.call(textEl.querySelectorAll(".se-lbl"));
    labels.forEach(function (l) { l.style.maxWidth = ""; });
    var right = textEl.getBoundingClientRect().right;
    var boxes = labels.map(function (l) { return l.getBoundingClientRect(); });
    labels.forEach(function (l, i) {
      if (boxes[i].right > right) l.style.maxWidth = Math.max(right - boxes[i].left, 0) + "px";
    });
  }
  window.addEventListener("resize", function () { if (S.ready) fitLabels(); });

  function paintMarks() {  // pending selection and the selected span's characters (no rebuild)
    var sel = S.selected >= 0 ? S.spans[S.selected] : null;
    Array.prototype.forEach.call(textEl.children, function (c) {
      var i = +c.dataset.i;
      c.classList.toggle("se-pending", !!S.pending && i >= S.pending.start && i < S.pending.end);
      c.classList.toggle("se-selchar", !!sel && i >= sel.start && i < sel.end);
    });
  }

  function renderList() {
    listEl.textContent = "";
    S.spans.forEach(function (s, k) {
      var li = el("li", k === S.selected ? "se-sel" : "");
      li.dataset.k = String(k);
      li.appendChild(el("span", "se-chip " + colourOf(s.type), shortName(s.type)));
      li.appendChild(el("span", "se-mention", mention(s)));
      li.appendChild(el("span", "se-off", offsetText(s.start, s.end)));
      var x = el("button", "se-x", "✕");
      x.type = "button";
      x.title = "删除 / delete";
      x.addEventListener("click", function (e) { e.stopPropagation(); S.selected = k; deleteSelected(); });
      li.appendChild(x);
      li.title = longName(s.type) + ": " + mention(s);
      li.addEventListener("click", function () { selectSpan(k); });
      listEl.appendChild(li);
    });
    SG.renderList(suggEl);
  }

  // ------------------------------------------------------------------ editing
  function pushUndo() { S.undo.push(copySpans(S.spans)); if (S.undo.length > 200) S.undo.shift(); }

  function indexOf(span) {
    for (var i = 0; i < S.spans.length; i++) {
      var s = S.spans[i];
      if (s.start === span.start && s.end === span.end && s.type === span.type) return i;
    }
    return -1;
  }

  function selectSpan(k) {
    S.pending = null; S.focusSug = null;
    S.selected = k >= 0 && k < S.spans.length ? k : -1;
    if (S.selected >= 0) {
      var s = S.spans[S.selected];
      setStatus("已选中 / selected: " + longName(s.type) + ": " + mention(s) +
                " [" + s.start + ", " + s.end + ") · 1-9 / click a type to retype · Delete to remove", false);
    }
    render();
  }

  function refuseReadonly() {
    setStatus("只读模式 / read-only: editing is switched off on this server", true);
  }

  function chooseType(code) {
    if (S.disabled) return;
    if (S.readonly) { S.pending = null; refuseReadonly(); render(); return; }
    if (S.pending) {
      var span = {start: S.pending.start, end: S.pending.end, type: code};
      S.pending = null;
      if (indexOf(span) >= 0) {
        S.selected = indexOf(span);
        setStatus("已存在 / this span already exists", true);
        render();
        return;
      }
      pushUndo();
      S.spans.push(span);
      S.spans.sort(cmpSpan);
      S.selected = indexOf(span);
      setStatus("已添加 / added: " + longName(code) + ": " + mention(span), false);
      render();
      emit("change");
    } else if (S.selected >= 0) {
      var old = S.spans[S.selected];
      if (old.type === code) return;
      var re = {start: old.start, end: old.end, type: code};
      pushUndo();
      if (indexOf(re) >= 0) {            // retyped onto an existing span: merge
        S.spans.splice(S.selected, 1);
      } else {
        S.spans[S.selected] = re;
        S.spans.sort(cmpSpan);
      }
      S.selected = indexOf(re);
      setStatus("已改类型 / retyped: " + longName(old.type) + " → " + longName(code) + ": " + mention(re), false);
      render();
      emit("change");
    } else {
      setStatus("先选择字符或点击片段 / select characters or click a span first", true);
    }
  }

  function deleteSelected() {
    if (S.disabled || S.selected < 0) return;
    if (S.readonly) { refuseReadonly(); return; }
    pushUndo();
    var s = S.spans.splice(S.selected, 1)[0];
    S.selected = -1;
    setStatus("已删除 / deleted: " + longName(s.type) + ": " + mention(s), false);
    render();
    emit("change");
  }

  function undo() {
    if (S.disabled) return;
    if (S.readonly) { refuseReadonly(); return; }
    if (!S.undo.length) {
      setStatus("没有可撤销的修改 / nothing to undo here (saved edits: use “Undo my last saved edit” on the page)", true);
      return;
    }
    S.spans = S.undo.pop();
    S.selected = -1; S.pending = null;
    setStatus("已撤销 / undone", false);
    render();
    emit("undo");
  }

  function clearSelection() {
    S.pending = null; S.selected = -1; S.focusSug = null;
    setStatus(HELP, false);
    render();
  }

  function action(name) {
    if (S.disabled) return;
    if (S.readonly && name === "save") { refuseReadonly(); return; }
    S.pending = null;
    if (name === "save") setStatus("已请求保存 / save requested", false);
    emit(name);
  }

  // ------------------------------------------------------------------ mouse
  function charAt(x, y) {
    var t = document.elementFromPoint(x, y);
    var c = t && t.closest ? t.closest(".se-ch") : null;
    return c && textEl.contains(c) ? +c.dataset.i : null;
  }

  function innermostAt(i) {
    var best = -1;
    S.spans.forEach(function (s, k) {
      if (s.start <= i && i < s.end &&
          (best < 0 || s.end - s.start < S.spans[best].end - S.spans[best].start)) best = k;
    });
    return best;
  }

  textEl.addEventListener("mousedown", function (e) {
    if (e.button !== 0 || S.disabled) return;
    root.focus({preventScroll: true});
    var bar = e.target.closest ? e.target.closest(".se-bar") : null;
    if (bar && bar.dataset.s) { e.preventDefault(); SG.focus(bar.dataset.s); return; }
    if (bar && !e.shiftKey) {
      e.preventDefault();
      selectSpan(+bar.dataset.k);
      return;
    }
    var c = e.target.closest ? e.target.closest(".se-ch") : null;
    if (!c) return;
    e.preventDefault();
    if (S.readonly) {               // no new span: a click still shows the span under it
      var k = innermostAt(+c.dataset.i);
      if (k >= 0) selectSpan(k); else refuseReadonly();
      return;
    }
    var i = +c.dataset.i;
    S.drag = {anchor: i, moved: false, shift: e.shiftKey};
    S.selected = -1;
    S.pending = {start: i, end: i + 1};
    paintMarks();
  });

  document.addEventListener("mousemove", function (e) {
    if (!S.drag) return;
    var j = charAt(e.clientX, e.clientY);
    if (j === null) return;
    if (j !== S.drag.anchor) S.drag.moved = true;
    S.pending = {start: Math.min(S.drag.anchor, j), end: Math.max(S.drag.anchor, j) + 1};
    paintMarks();
  });

  document.addEventListener("mouseup", function (e) {
    if (!S.drag) return;
    var d = S.drag;
    S.drag = null;
    var j = charAt(e.clientX, e.clientY);
    if (j !== null && d.moved) {
      S.pending = {start: Math.min(d.anchor, j), end: Math.max(d.anchor, j) + 1};
    }
    if (!d.moved && !d.shift) {
      var k = innermostAt(d.anchor);
      if (k >= 0) { selectSpan(k); return; }
    }
    var p = S.pending;
    setStatus("已选择 / selected “" + S.chars.slice(p.start, p.end).join("") + "” " + offsetText(p.start, p.end) +
              ": 选择类型 / pick a type (click or 1-9) · Esc cancels", false);
    render();
  });

  listEl.addEventListener("mousedown", function () { root.focus({preventScroll: true}); });
  suggEl.addEventListener("mousedown", function () { root.focus({preventScroll: true}); });

  // ------------------------------------------------------------------ buttons and keys
  document.getElementById("b-prev").addEventListener("click", function () { action("prev"); });
  document.getElementById("b-next").addEventListener("click", function () { action("next"); });
  document.getElementById("b-save").addEventListener("click", function () { action("save"); });
  document.getElementById("b-undo").addEventListener("click", undo);
  document.getElementById("b-del").addEventListener("click", deleteSelected);

  function digit(e) {
    var m = /^(?:Digit|Numpad)([1-9])$/.exec(e.code || "");
    if (m) return +m[1];
    return /^[1-9]$/.test(e.key) ? +e.key : 0;
  }

  document.addEventListener("keydown", function (e) {
    var key = e.key, code = e.code || "";
    var mod = e.ctrlKey || e.metaKey;
    if (mod && !e.altKey && (key === "s" || key === "S" || code === "KeyS")) {
      e.preventDefault(); action("save"); return;
    }
    if (mod && !e.altKey && !e.shiftKey && (key === "z" || key === "Z" || code === "KeyZ")) {
      e.preventDefault(); undo(); return;
    }
    if (e.altKey && !mod && key === "ArrowRight") { e.preventDefault(); action("next"); return; }
    if (e.altKey && !mod && key === "ArrowLeft") { e.preventDefault(); action("prev"); return; }
    if (mod || e.altKey) return;
    if (SG.onKey(e)) return;
    if (key === "Delete" || key === "Backspace") {
      if (S.selected >= 0) { e.preventDefault(); deleteSelected(); }
      return;
    }
    if (key === "Escape") { clearSelection(); return; }
    var n = digit(e);
    if (n) {
      e.preventDefault();
      if (n <= S.types.length) chooseType(S.types[n - 1].code);
      else setStatus("没有第 " + n + " 个类型 / no type " + n, true);
    }
  });

  if (window.ResizeObserver) new ResizeObserver(setHeight).observe(root);
  statusEl.textContent = HELP;
  // Say "ready" until the first render arrives: when Streamlit moves the frame (another element
  // appears above it) the new frame can load before the page listens to it, and a single
  // message would be lost (the page logs "unregistered ComponentInstance").
  var tries = 0;
  (function ready() {
    if (S.ready) return;
    send("streamlit:componentReady", {apiVersion: 1});
    if (++tries < 200) setTimeout(ready, tries < 10 ? 100 : 500);
  })();
})();
