// Sign-in form: posts JSON to /login; the server sets an HttpOnly session cookie.
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
    error.textContent = "The hall server cannot be reached.";
  }
});
