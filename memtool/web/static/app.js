// mem serve: the little behaviour htmx does not give (no inline scripts: the page's CSP forbids them).
(function () {
  "use strict";
  function day(ordinal) {  // a proleptic Gregorian ordinal (Python's date.toordinal) → YYYY-MM-DD
    var ms = (ordinal - 719163) * 86400000;
    return new Date(ms).toISOString().slice(0, 10);
  }
  function slider() {
    var range = document.getElementById("as-of"), label = document.getElementById("as-of-label");
    if (!range || !label) return;
    range.addEventListener("input", function () { label.textContent = day(parseInt(range.value, 10)); });
  }
  function chart() {
    var box = document.getElementById("confidence-chart"), data = document.getElementById("confidence-data");
    if (!box || !data || typeof uPlot === "undefined") return;
    var c = JSON.parse(data.textContent), colours = ["#7b2cbf", "#1d7874", "#d1495b", "#edae49", "#00798c", "#30638e"];
    var series = [{}].concat(c.series.map(function (s, i) {
      return {label: s.label, stroke: colours[i % colours.length], width: 2, spanGaps: true,
              points: {show: true, size: 7}};
    }));
    var rows = [c.x].concat(c.series.map(function (s) { return s.values; }));
    var width = Math.min(box.clientWidth || 760, 900);
    new uPlot({width: width, height: 260, series: series,
               scales: {y: {range: [0, 1]}}, axes: [{}, {label: "confidence"}]}, rows, box);
    box.setAttribute("data-drawn", String(c.x.length));
  }
  function newestDays() {  // the heat map ends at the newest day: show that end first
    var wrap = document.querySelector(".heat-wrap");
    if (wrap) wrap.scrollLeft = wrap.scrollWidth;
  }
  document.addEventListener("DOMContentLoaded", function () { slider(); chart(); newestDays(); });
})();
