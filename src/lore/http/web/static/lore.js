// lore web UI: the only script, and every page works without it.
// "/" jumps to the search field (on the Notes page) unless you are typing already; a submitted
// form disables its buttons so that a double click cannot post twice.
"use strict";
document.addEventListener("keydown", (event) => {
  if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target.closest("input, textarea, select, [contenteditable]")) return;
  const field = document.getElementById("q");
  if (!field) return;
  event.preventDefault();
  field.focus();
  field.select();
});
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form.method !== "post") return;
  setTimeout(() => form.querySelectorAll("button").forEach((b) => { b.disabled = true; }), 0);
});
