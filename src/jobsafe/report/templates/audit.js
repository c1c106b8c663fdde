(function () {
  "use strict";
  var table = document.getElementById("inventory");
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var search = document.getElementById("search");
  var source = document.getElementById("source");
  var flag = document.getElementById("flag");
  var shown = document.getElementById("shown");
  var cells = JSON.parse(document.getElementById("cells-data").textContent);
  var labels = JSON.parse(document.getElementById("labels-data").textContent);
  var tip = document.getElementById("tip");
  var picked = null; // the heat-map cell whose jobs the table shows

  // -- sorting: numbers before text, empty values last; a second click reverses
  function sortKey(row, col) {
    var cell = row.cells[col];
    var text = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    if (text === "" || text === "–") { return [2, ""]; }
    var number = Number(text);
    return isNaN(number) ? [1, text.toLowerCase()] : [0, number];
  }
  function compare(a, b) {
    if (a[0] !== b[0]) { return a[0] - b[0]; }
    return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
  }
  function sortBy(col, ascending) {
    var th = table.tHead.rows[0].cells[col];
    if (!th) { return; }
    table.querySelectorAll("th").forEach(function (other) { other.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var keyed = rows.map(function (row, i) { return [sortKey(row, col), i, row]; });
    keyed.sort(function (a, b) {
      var c = compare(a[0], b[0]);
      if (a[0][0] === 2 || b[0][0] === 2) { return c || a[1] - b[1]; } // empty stays last
      return (ascending ? c : -c) || a[1] - b[1];
    });
    var body = table.tBodies[0];
    keyed.forEach(function (k) { body.appendChild(k[2]); });
  }
  table.querySelectorAll("th button").forEach(function (button) {
    button.addEventListener("click", function () {
      sortBy(Number(button.getAttribute("data-col")),
             button.parentNode.getAttribute("aria-sort") !== "ascending");
    });
  });

  // -- filtering
  function apply() {
    var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    var only = picked ? new Set(jobsAt(picked).concat(cells.hourly || []).map(function (c) { return c[0]; })) : null;
    var count = 0;
    rows.forEach(function (row, i) {
      var text = row.textContent.toLowerCase();
      var visible = words.every(function (w) { return text.indexOf(w) !== -1; })
        && (!source.value || row.getAttribute("data-source") === source.value)
        && (!flag.value || row.getAttribute("data-flags").split(" ").indexOf(flag.value) !== -1)
        && (!only || only.has(Number(row.id.slice(4))));
      row.hidden = !visible;
      if (visible) { count += 1; }
    });
    shown.textContent = count + " of " + rows.length + " jobs" + (picked ? " starting " + hourName(picked) : "");
  }
  [search, source, flag].forEach(function (el) { el.addEventListener("input", apply); });
  document.getElementById("clear").addEventListener("click", function () {
    search.value = ""; source.value = ""; flag.value = "";
    pick(null);
  });
  document.querySelectorAll("button.concern").forEach(function (button) {
    button.addEventListener("click", function () {
      location.hash = "flag=" + button.getAttribute("data-flag");
    });
  });

  // -- the week: hover shows a cell's jobs, click filters the table to them
  var DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
  function hourName(td) {
    var hour = Number(td.getAttribute("data-hour"));
    var h = ("0" + (hour % 24)).slice(-2);
    return DAYS[Math.floor(hour / 24)] + " " + h + ":00–" + h + ":59";
  }
  function jobsAt(td) { return cells[td.getAttribute("data-hour")] || []; }
  function often(perWeek) {
    if (perWeek >= 0.95) { return Math.round(perWeek) === 1 ? "once" : Math.round(perWeek) + " times"; }
    return "some weeks";
  }
  function pick(td) {
    if (picked) { picked.classList.remove("picked"); }
    picked = td && td !== picked ? td : null;
    if (picked) { picked.classList.add("picked"); }
    apply();
  }
  document.querySelectorAll("table.heat td").forEach(function (td) {
    td.addEventListener("mouseenter", function () {
      var jobs = jobsAt(td);
      var hourly = cells.hourly || [];
      tip.textContent = "";
      var head = document.createElement("strong");
      head.textContent = hourName(td) + " · " + jobs.length + (jobs.length === 1 ? " job" : " jobs")
        + (hourly.length ? " (and " + hourly.length + " every hour)" : "");
      tip.appendChild(head);
      // this hour's own jobs first, then those that start every hour; 25 lines at most
      var lines = jobs.map(function (job) { return labels[job[0]] + " (" + often(job[1]) + ")"; })
        .concat(hourly.map(function (job) { return labels[job[0]] + " (every hour)"; }));
      if (lines.length) {
        var list = document.createElement("ul");
        lines.slice(0, 25).forEach(function (line) {
          var item = document.createElement("li");
          item.textContent = line;
          list.appendChild(item);
        });
        if (lines.length > 25) {
          var more = document.createElement("li");
          more.textContent = "and " + (lines.length - 25) + " more: click to list them";
          list.appendChild(more);
        }
        tip.appendChild(list);
      }
      var box = td.getBoundingClientRect();
      tip.style.left = Math.max(8, Math.min(window.scrollX + box.left, window.scrollX + document.documentElement.clientWidth - 470)) + "px";
      tip.style.top = (window.scrollY + box.bottom + 6) + "px";
      tip.hidden = false;
    });
    td.addEventListener("mouseleave", function () { tip.hidden = true; });
    td.addEventListener("click", function () {
      pick(td);
      if (picked) { document.getElementById("jobs").scrollIntoView(); }
    });
  });

  // -- the address: #rule-JOB101 opens that rule's document, #job-3 shows that job, and
  // #flag=unguarded&source=cron&q=billing&sort=2&order=desc is a view of the table to link to
  function fromHash() {
    var hash = decodeURIComponent(location.hash.slice(1));
    if (hash.indexOf("=") !== -1) {
      var view = {};
      hash.split("&").forEach(function (pair) {
        var at = pair.indexOf("=");
        view[pair.slice(0, at)] = pair.slice(at + 1);
      });
      search.value = view.q || "";
      source.value = view.source || "";
      flag.value = view.flag || "";
      if (view.sort !== undefined) { sortBy(Number(view.sort), view.order !== "desc"); }
      apply();
      document.getElementById("jobs").scrollIntoView();
      return;
    }
    var target = hash ? document.getElementById(hash) : null;
    if (target && target.tagName === "DETAILS") { target.open = true; }
    if (target && target.tagName === "TR" && target.hidden) {
      search.value = ""; source.value = ""; flag.value = ""; pick(null);
      target.scrollIntoView();
    }
  }
  window.addEventListener("hashchange", fromHash);
  apply();
  fromHash();
  document.body.setAttribute("data-ready", "true");
  document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
}());
