/* Span editor: suggested spans (from a model or a run), loaded before span_editor.js.

   The page passes suggestions ({start, end, type, score}) with its arguments; the editor draws
   the visible ones dashed, apart from the spans, with their score ("0.87") in the label. A
   suggestion is visible while no span equals it and it was not rejected since the editor last
   started on the document. Accepting one adds it as an ordinary span (undoable like any other
   edit) and sends "accept"; rejecting hides it and sends "reject"; every value carries the
   lists "accepted" and "rejected" ({start, end, type}), so that the page can record where an
   accepted span came from and keep rejected ones hidden. Keys on the focused suggestion: Enter
   or A accept, X or Backspace/Delete reject; Shift+A accepts all; Esc clears the focus.

   Strings from data are set with textContent / title only, as in span_editor.js.
*/
(function () {
  "use strict";

  function key(s) { return s.start + ":" + s.end + ":" + s.type; }

  function scoreText(score) { return score == null ? "?" : score.toFixed(2); }

  // ed: what span_editor.js lends (its state S and drawing helpers).
  window.SpanEditorSuggestions = function (ed) {
    var S = ed.S;
    var all = [], rejected = {}, accepted = [], rejectedList = [];
    S.focusSug = null;                       // key of the focused suggestion, or null

    function setArgs(raw, n) {
      var out = [], seen = {};
      (Array.isArray(raw) ? raw : []).forEach(function (s) {
        if (!s || typeof s !== "object") return;
        var a = ed.toInt(s.start), b = ed.toInt(s.end), t = s.type == null ? "" : String(s.type);
        if (a === null || b === null || a < 0 || b > n || a >= b) return;
        var sc = typeof s.score === "number" && isFinite(s.score) ? s.score : null;
        var item = {start: a, end: b, type: t, score: sc};
        if (seen[key(item)]) return;
        seen[key(item)] = true;
        out.push(item);
      });
      all = out.sort(ed.cmpSpan);
    }

    function reset() { rejected = {}; accepted = []; rejectedList = []; S.focusSug = null; }

    function visible() {
      var taken = {};
      S.spans.forEach(function (s) { taken[key(s)] = true; });
      return all.filter(function (s) { return !taken[key(s)] && !rejected[key(s)]; });
    }

    function plain(s) { return {start: s.start, end: s.end, type: s.type}; }

    function lists() {
      return {accepted: accepted.map(plain), rejected: rejectedList.map(plain)};
    }

    function find(k) {
      var v = visible();
      for (var i = 0; i < v.length; i++) if (key(v[i]) === k) return v[i];
      return null;
    }

    function describe(s) {
      return ed.longName(s.type) + ": " + ed.mention(s) + " " + ed.offsetText(s.start, s.end) +
        " · " + scoreText(s.score);
    }

    // After an accept or a reject the focus moves to the next suggestion, for a run of keys.
    function focusAfter(i) {
      var left = visible();
      S.focusSug = left.length ? key(left[Math.min(i, left.length - 1)]) : null;
      if (S.focusSug === null) return;
      var s = find(S.focusSug);
      ed.setStatus("下一条建议 / next suggestion: " + describe(s) + " · Enter/A accept · X reject", false);
    }

    function focus(k) {
      var s = find(k);
      if (!s) return;
      S.selected = -1; S.pending = null; S.focusSug = k;
      ed.setStatus("建议 / suggestion: " + describe(s) + " · Enter/A 接受 accept · X/Backspace 拒绝 reject · " +
                   "Shift+A accept all", false);
      ed.render();
    }

    // One suggestion accepted or rejected (change(s) does which), then the focus moves on.
    function decide(k, action, change) {
      if (S.disabled) return;
      if (S.readonly) { ed.refuseReadonly(); return; }
      var v = visible(), s = find(k);
      if (!s) return;
      change(s);
      focusAfter(v.indexOf(s));
      ed.render();
      ed.emit(action);
    }

    function accept(k) {
      decide(k, "accept", function (s) {
        ed.pushUndo();
        S.spans.push(plain(s));
        S.spans.sort(ed.cmpSpan);
        accepted.push(s);
        S.selected = -1;
        ed.setStatus("已接受 / accepted: " + describe(s), false);
      });
    }

    function reject(k) {
      decide(k, "reject", function (s) {
        rejected[k] = true;
        rejectedList.push(s);
        ed.setStatus("已拒绝 / rejected: " + describe(s), false);
      });
    }

    function acceptAll() {
      if (S.disabled) return;
      if (S.readonly) { ed.refuseReadonly(); return; }
      var v = visible();
      if (!v.length) { ed.setStatus("没有建议 / no suggestion left", true); return; }
      ed.pushUndo();
      v.forEach(function (s) { S.spans.push(plain(s)); accepted.push(s); });
      S.spans.sort(ed.cmpSpan);
      S.selected = -1; S.focusSug = null;
      ed.setStatus("已全部接受 / accepted all " + v.length + " suggestions", false);
      ed.render();
      ed.emit("accept");
    }

    function bar(s, bar) {
      bar.classList.add("se-sugg");
      bar.dataset.s = key(s);
      if (S.focusSug === key(s)) bar.classList.add("se-sel");
      bar.title = "建议 / suggestion " + scoreText(s.score) + ": " + ed.longName(s.type) + ": " + ed.mention(s);
      return ed.shortName(s.type) + " " + scoreText(s.score);
    }

    function renderList(box) {
      box.textContent = "";
      var v = visible();
      if (!all.length) return;
      var head = ed.el("div", "se-sugg-head");
      head.appendChild(ed.el("span", "se-sugg-title", "建议 / Suggestions: " + v.length));
      var b = ed.el("button", "se-accept-all", "✓ 全部接受 / Accept all");
      b.type = "button"; b.id = "b-accept-all"; b.title = "Accept every suggestion (Shift+A)";
      b.disabled = S.readonly || !v.length;
      b.addEventListener("click", acceptAll);
      head.appendChild(b);
      box.appendChild(head);
      var ol = ed.el("ol", "se-sugg-list");
      v.forEach(function (s) {
        var li = ed.el("li", S.focusSug === key(s) ? "se-sel" : "");
        li.dataset.s = key(s);
        li.appendChild(ed.el("span", "se-chip se-sugg-chip " + ed.colourOf(s.type), ed.shortName(s.type)));
        li.appendChild(ed.el("span", "se-mention", ed.mention(s)));
        li.appendChild(ed.el("span", "se-off", ed.offsetText(s.start, s.end)));
        li.appendChild(ed.el("span", "se-score", scoreText(s.score)));
        [["se-ok", "✓", "接受 / accept", accept], ["se-x", "✕", "拒绝 / reject", reject]].forEach(function (a) {
          var btn = ed.el("button", a[0], a[1]);
          btn.type = "button"; btn.title = a[2]; btn.disabled = S.readonly;
          btn.addEventListener("click", function (e) { e.stopPropagation(); a[3](key(s)); });
          li.appendChild(btn);
        });
        li.title = describe(s);
        li.addEventListener("click", function () { focus(key(s)); });
        ol.appendChild(li);
      });
      box.appendChild(ol);
    }

    // True when the key was for the suggestions.
    function onKey(e) {
      var k = e.key;
      if (e.shiftKey && (k === "A" || k === "a" || e.code === "KeyA")) {
        e.preventDefault(); acceptAll(); return true;
      }
      if (S.focusSug === null || !find(S.focusSug)) return false;
      if (k === "Enter" || k === "a" || k === "A") { e.preventDefault(); accept(S.focusSug); return true; }
      if (k === "x" || k === "X" || k === "Backspace" || k === "Delete") {
        e.preventDefault(); reject(S.focusSug); return true;
      }
      if (k === "Escape") { S.focusSug = null; return false; }
      return false;
    }

    return {setArgs: setArgs, reset: reset, visible: visible, lists: lists, focus: focus, bar: bar,
            renderList: renderList, onKey: onKey, key: key};
  };
})();
