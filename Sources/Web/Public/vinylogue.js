// Enhancements only: every page and action works without this file.
(function () {
  "use strict";

  // Charts: ← and → move a year; a horizontal swipe does too.
  var chart = document.querySelector(".chart");
  if (chart) {
    var prev = chart.getAttribute("data-prev-url");
    var next = chart.getAttribute("data-next-url");
    var go = function (url) { if (url) { window.location.href = url; } };
    document.addEventListener("keydown", function (e) {
      if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) { return; }
      var tag = (e.target && e.target.tagName) || "";
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") { return; }
      if (e.key === "ArrowLeft") { go(prev); }
      if (e.key === "ArrowRight") { go(next); }
    });
    var startX = null, startY = null;
    chart.addEventListener("touchstart", function (e) {
      if (e.touches.length === 1) { startX = e.touches[0].clientX; startY = e.touches[0].clientY; }
    }, { passive: true });
    chart.addEventListener("touchend", function (e) {
      if (startX === null) { return; }
      var dx = e.changedTouches[0].clientX - startX, dy = e.changedTouches[0].clientY - startY;
      startX = null;
      if (Math.abs(dx) > 60 && Math.abs(dx) > 2 * Math.abs(dy)) { go(dx > 0 ? prev : next); }
    }, { passive: true });
  }

  // Users: drag to reorder, saved with one POST.
  var list = document.getElementById("users");
  if (list) {
    var dragged = null;
    list.addEventListener("dragstart", function (e) {
      dragged = e.target.closest("li.user");
      if (dragged) { dragged.classList.add("dragging"); e.dataTransfer.effectAllowed = "move"; }
    });
    list.addEventListener("dragover", function (e) {
      if (!dragged) { return; }
      e.preventDefault();
      var over = e.target.closest("li.user");
      if (!over || over === dragged) { return; }
      var rect = over.getBoundingClientRect();
      var after = e.clientY > rect.top + rect.height / 2;
      list.insertBefore(dragged, after ? over.nextSibling : over);
    });
    list.addEventListener("dragend", function () {
      if (!dragged) { return; }
      dragged.classList.remove("dragging");
      dragged = null;
      var order = Array.prototype.map.call(list.querySelectorAll("li.user"), function (li) { return li.getAttribute("data-user"); });
      var body = new URLSearchParams();
      body.set("csrf", list.getAttribute("data-csrf"));
      body.set("order", order.join(","));
      fetch(list.getAttribute("data-reorder-url"), { method: "POST", body: body, credentials: "same-origin" })
        .then(function (r) { if (!r.ok) { window.location.reload(); } })
        .catch(function () { window.location.reload(); });
    });
  }
  // Share: the Web Share API where there is one, else the permalink is
  // copied; without either (or without this file) the button is a plain
  // link to the permalink.
  Array.prototype.forEach.call(document.querySelectorAll("a.share-link"), function (link) {
    link.addEventListener("click", function (e) {
      var url = link.href;
      if (navigator.share) {
        e.preventDefault();
        navigator.share({ title: link.getAttribute("data-share-title") || document.title, url: url }).catch(function () {});
      } else if (navigator.clipboard && navigator.clipboard.writeText) {
        e.preventDefault();
        navigator.clipboard.writeText(url).then(function () {
          link.textContent = "Link copied";
          setTimeout(function () { link.textContent = "Share"; }, 2500);
        }, function () { window.location.href = url; });
      }
    });
  });
})();
