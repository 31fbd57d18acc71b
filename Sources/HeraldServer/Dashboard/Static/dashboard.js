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
    // The box (.chart-box) sets the height; the chart fills it at any width.
    options: { animation: false, maintainAspectRatio: false, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
  });
  chart.setAttribute("data-drawn", "true");
}

// The locations map (Leaflet, from Debian's libjs-leaflet): each location as a dot and its
// radius; a click fills the form's latitude and longitude and shows where the new location
// would be. Names are set as text, never as HTML. Without a tile server the map is a plain
// background with lines every 30 degrees.
const mapElement = document.getElementById("map");
if (mapElement && window.L) {
  const L = window.L;
  const places = JSON.parse(mapElement.getAttribute("data-places") || "[]");
  const tiles = mapElement.getAttribute("data-tiles");
  const map = L.map(mapElement, { worldCopyJump: true, attributionControl: Boolean(tiles) });
  if (tiles) {
    L.tileLayer(tiles, { maxZoom: 19, attribution: mapElement.getAttribute("data-attribution") || "" }).addTo(map);
  } else {
    const line = { color: "#9fb3c4", weight: 1, interactive: false };
    for (let lat = -60; lat <= 60; lat += 30) L.polyline([[lat, -540], [lat, 540]], line).addTo(map);
    for (let long = -540; long <= 540; long += 30) L.polyline([[-85, long], [85, long]], line).addTo(map);
    // The world's coastlines (Natural Earth 1:110m, served by Herald): geography without tiles,
    // drawn three times side by side so that panning past the date line still shows land.
    const outline = mapElement.getAttribute("data-outline-url");
    if (outline) {
      fetch(outline, { credentials: "same-origin" })
        .then((response) => (response.ok ? response.json() : Promise.reject(new Error(String(response.status)))))
        .then((world) => {
          const style = { color: "#5b7083", weight: 1, interactive: false, className: "world-outline" };
          for (const shift of [-360, 0, 360]) {
            L.geoJSON(world, { style, coordsToLatLng: (point) => L.latLng(point[1], point[0] + shift) }).addTo(map).bringToBack();
          }
          mapElement.setAttribute("data-outline", "drawn");
        })
        .catch(() => mapElement.setAttribute("data-outline", "failed"));
    }
  }
  L.control.scale({ imperial: false }).addTo(map);
  const points = [];
  for (const place of places) {
    const centre = [place.lat, place.long];
    L.circle(centre, { radius: place.rad, color: "#0b5cad", weight: 2, fillOpacity: 0.15 }).addTo(map);
    const label = document.createElement("span");
    label.textContent = place.name;
    L.circleMarker(centre, { radius: 5, color: "#17324d", fillColor: "#0b5cad", fillOpacity: 1 })
      .bindTooltip(label, { permanent: places.length <= 20, direction: "top" })
      .addTo(map);
    points.push(centre);
  }
  if (points.length) map.fitBounds(L.latLngBounds(points).pad(0.6), { maxZoom: 15 });
  else map.setView([20, 0], 2);

  const field = (name) => document.getElementById(mapElement.getAttribute(name));
  const lat = field("data-lat-field");
  const long = field("data-long-field");
  const rad = field("data-rad-field");
  let placed = null;
  const showPlaced = () => {
    const centre = [Number(lat.value), Number(long.value)];
    const radius = Number(rad && rad.value) || 100;
    if (!lat.value || !long.value || centre.some(Number.isNaN)) return;
    if (placed) placed.setLatLng(centre).setRadius(radius);
    else placed = L.circle(centre, { radius, color: "#d07a00", weight: 2, dashArray: "4 4", fillOpacity: 0.2 }).addTo(map);
  };
  if (lat && long) {
    map.on("click", (event) => {
      const point = event.latlng.wrap();
      lat.value = point.lat.toFixed(6);
      long.value = point.lng.toFixed(6);
      showPlaced();
      mapElement.setAttribute("data-placed", lat.value + "," + long.value);
    });
    for (const input of [lat, long, rad]) if (input) input.addEventListener("change", showPlaced);
  }
  mapElement.setAttribute("data-drawn", "true");
}

// The composer's audience count follows the target fields as they are typed: the form is posted
// as "Preview audience" would post it (CSRF token included) and the count, or the refusal at the
// audience field, is taken from the page the server answers (its text escaped there). Without a
// script the "Preview audience" button does the same with a page load.
const composer = document.getElementById("composer");
const audiencePreview = composer && composer.querySelector(".audience-preview");
if (audiencePreview) {
  let timer = null;
  let asked = 0;
  // Puts the answer's element `id` (if any) in place of this page's, in `parent` before `before` (null: last).
  const replace = (id, answer, parent, before) => {
    const current = document.getElementById(id);
    if (current) current.remove();
    const found = answer.getElementById(id);
    if (found) parent.insertBefore(document.adoptNode(found), before);
    return found;
  };
  const count = async () => {
    const question = ++asked;
    const fields = new FormData(composer);
    fields.set("action", "audience");
    // (`composer.action` would be its buttons named "action", not the address.)
    const response = await fetch(composer.getAttribute("action"), { method: "POST", body: new URLSearchParams(fields), credentials: "same-origin" });
    const answer = new DOMParser().parseFromString(await response.text(), "text/html");
    if (question !== asked) return; // a newer question is on its way
    const audience = document.getElementById("audience");
    if (replace("audience_error", answer, audiencePreview.parentNode, audiencePreview)) {
      audience.setAttribute("aria-invalid", "true");
      audience.setAttribute("aria-describedby", "audience_hint audience_error");
    } else {
      audience.removeAttribute("aria-invalid");
      audience.setAttribute("aria-describedby", "audience_hint");
    }
    replace("audience-count", answer, audiencePreview, null);
    audiencePreview.setAttribute("data-counted", String(question));
  };
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(() => count().catch(() => audiencePreview.setAttribute("data-counted", "failed")), 400);
  };
  for (const name of ["audience", "topics", "custom_user_ids"]) composer.elements[name].addEventListener("input", later);
  for (const box of composer.querySelectorAll("input[name^=platform_], #interactive_only")) box.addEventListener("change", later);
}
