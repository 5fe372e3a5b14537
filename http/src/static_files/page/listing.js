"use strict";
(function () {
  var q = document.getElementById("q");
  if (q) {
    q.addEventListener("input", function () {
      var v = q.value.toLowerCase();
      document.querySelectorAll("tbody tr[data-entry]").forEach(function (r) {
        r.toggleAttribute("hidden", v !== "" && r.cells[0].textContent.toLowerCase().indexOf(v) < 0);
      });
    });
  }
  var up = document.getElementById("up");
  if (up) {
    up.addEventListener("submit", function (e) {
      e.preventDefault();
      var bar = document.getElementById("bar"), msg = document.getElementById("msg");
      var x = new XMLHttpRequest();
      bar.removeAttribute("hidden");
      bar.value = 0;
      x.upload.onprogress = function (ev) {
        if (ev.lengthComputable) bar.value = (100 * ev.loaded) / ev.total;
      };
      x.onload = function () {
        if (x.status < 300) location.reload();
        else msg.textContent = x.responseText;
      };
      x.onerror = function () { msg.textContent = "upload failed"; };
      x.open("POST", location.pathname);
      x.send(new FormData(up));
    });
  }
})();
