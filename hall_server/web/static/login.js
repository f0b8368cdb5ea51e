// Sign-in form: posts JSON to /login; the server sets an HttpOnly session cookie.
// The page speaks the language the staff member picks (kept on this device), else the hall's.
"use strict";
document.getElementById("login").addEventListener("submit", async (event) => {
  event.preventDefault();
  const error = document.getElementById("login-error");
  error.textContent = "";
  const body = JSON.stringify({
    name: document.getElementById("name").value.trim(),
    password: document.getElementById("password").value,
  });
  try {
    const response = await fetch("/login", {method: "POST", headers: {"content-type": "application/json"}, body});
    const answer = await response.json();
    if (answer.ok) {
      window.location.assign("/console");
    } else {
      error.textContent = answer.error.message;
      document.getElementById("password").select();
    }
  } catch (e) {
    error.textContent = I18n.t("The hall server cannot be reached.");
  }
});
I18n.start(() => {}, { remember: true, chooser: document.getElementById("language") });
