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
        ? Object.entries(value).map(([reason, count]) => reason + ": " + count).join(", ")
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
