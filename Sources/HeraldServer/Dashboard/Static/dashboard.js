// Herald's dashboard: the little that needs a script. Every page works without it, except the
// live push counters (which then show the state when the page was loaded).
"use strict";

// Ask before a form that cannot be undone.
document.addEventListener("submit", (event) => {
  const question = event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});

// Show only the credential fields of the chosen platform type; hidden ones are disabled so
// that they are not sent.
function showCredentials(form, type) {
  for (const fieldset of form.querySelectorAll("fieldset[data-credentials]")) {
    const shown = fieldset.getAttribute("data-credentials") === type;
    fieldset.hidden = !shown;
    fieldset.disabled = !shown;
  }
}
for (const select of document.querySelectorAll("select[data-credentials-switch]")) {
  showCredentials(select.form, select.value);
  select.addEventListener("change", () => showCredentials(select.form, select.value));
}
for (const form of document.querySelectorAll("form[data-credentials-fixed]")) {
  showCredentials(form, form.getAttribute("data-credentials-fixed"));
}

// A chosen credential file is read into its field (text, or base64 for a .p12).
for (const input of document.querySelectorAll("input[type=file][data-load-into], input[type=file][data-load-base64-into]")) {
  input.addEventListener("change", () => {
    const file = input.files[0];
    if (!file) return;
    const reader = new FileReader();
    const text = input.hasAttribute("data-load-into");
    const target = document.getElementById(input.getAttribute(text ? "data-load-into" : "data-load-base64-into"));
    reader.onload = () => {
      target.value = text ? reader.result : String(reader.result).replace(/^data:[^,]*,/, "");
    };
    if (text) reader.readAsText(file); else reader.readAsDataURL(file);
  });
}

// A push's page follows its delivery over server-sent events until it is done.
const live = document.getElementById("push-live");
if (live) {
  const state = document.getElementById("live-state");
  const source = new EventSource(live.getAttribute("data-events"));
  source.addEventListener("status", (event) => {
    const status = JSON.parse(event.data);
    for (const field of live.querySelectorAll("[data-field]")) {
      const name = field.getAttribute("data-field");
      if (!(name in status)) continue;
      const value = status[name];
      field.textContent = typeof value === "object"
        ? Object.entries(value).map(([reason, count]) => reason + ": " + count).join(", ") || "none"
        : String(value);
    }
    if (status.status === "done") {
      state.textContent = "Delivery finished.";
      source.close();
    }
  });
  source.addEventListener("error", () => {
    if (source.readyState === EventSource.CLOSED) state.textContent = "Live updates stopped; reload the page.";
  });
}

// The logs page appends each event as it happens (the server's own line format).
const log = document.getElementById("log-lines");
if (log) {
  const state = document.getElementById("log-state");
  const source = new EventSource(log.getAttribute("data-events"));
  source.addEventListener("open", () => log.setAttribute("data-live", "open"));
  const append = (event) => {
    const data = JSON.parse(event.data);
    const parts = [new Date(data.time).toISOString(), data.kind, data.message];
    if (data.push_id) parts.push("push=" + data.push_id);
    if (data.platform_id) parts.push("platform=" + data.platform_id);
    if (data.provider) parts.push("provider=" + data.provider);
    for (const key of Object.keys(data.counts || {}).sort()) parts.push(key + "=" + data.counts[key]);
    const item = document.createElement("li");
    item.textContent = parts.join(" ");
    log.appendChild(item);
    state.textContent = "";
  };
  for (const kind of ["push_accepted", "batch_sent", "failure", "credentials_problem"]) source.addEventListener(kind, append);
}

// The analytics chart, when Chart.js (Debian's libjs-chart.js) is served; the table below it
// holds the same numbers either way.
const chart = document.getElementById("analytics-chart");
if (chart && window.Chart) {
  const rows = JSON.parse(chart.getAttribute("data-series"));
  const line = (label, key, color) => ({ label, data: rows.map((row) => row[key]), borderColor: color, backgroundColor: color, tension: 0.2 });
  new window.Chart(chart, {
    type: "line",
    data: {
      labels: rows.map((row) => row.start.replace("T", " ").replace(":00Z", "")),
      datasets: [line("Received", "received", "#0b5cad"), line("Opened", "opened", "#2a9d4b"), line("Geofence triggered", "geofence", "#d07a00")],
    },
    options: { animation: false, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
  });
  chart.setAttribute("data-drawn", "true");
}
