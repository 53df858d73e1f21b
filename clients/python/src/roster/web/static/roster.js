// roster-web's pages: each tab talks JSON-RPC to its own rosterd connection through the gateway's WebSocket.
// The daemon decides everything a form shows (debounce, "validating…", verdicts, submittable); this file only
// draws it. Log-in and registration go by POST, so the session token never reaches this script.

const words = JSON.parse(document.getElementById("words").textContent);
const page = document.body.dataset.page;
const locale = document.documentElement.lang;
const needsLogIn = page === "contacts" || page === "account" || page === "verify";

function say(key, values = {}) {
  return words[key].replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ""));
}

/** The WebSocket as calls (answers matched by id) and event listeners by type. */
class Connection {
  constructor() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    this.socket = new WebSocket(`${scheme}://${location.host}/ws?locale=${encodeURIComponent(locale)}`);
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = new Map();
    this.socket.addEventListener("message", (message) => this.receive(message.data));
    this.socket.addEventListener("close", () => {
      for (const { reject } of this.pending.values()) reject({ data: { reason: "connection_lost" } });
      this.pending.clear();
      this.emit("closed", {});
    });
  }

  call(method, params = {}) {
    const id = this.nextId++;
    this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  on(type, listener) {
    if (!this.listeners.has(type)) this.listeners.set(type, []);
    this.listeners.get(type).push(listener);
  }

  emit(type, params) {
    for (const listener of this.listeners.get(type) ?? []) listener(params);
  }

  receive(text) {
    const message = JSON.parse(text);
    if (message.method === "event") {
      this.emit(message.params.type, message.params);
      return;
    }
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    if ("error" in message) waiting.reject(message.error);
    else waiting.resolve(message.result);
  }
}

/** Draws one field's state from the daemon under its input: the message, and data-state/-code for styling. */
function showField(field) {
  const input = document.querySelector(`[data-field="${field.name}"]`);
  const status = document.getElementById(`${field.name}-status`);
  if (!input || !status) return;
  input.disabled = !field.enabled;
  input.setAttribute("aria-invalid", String(field.state === "invalid"));
  status.dataset.state = field.state;
  status.dataset.code = field.code;
  status.textContent = field.message;
}

function showFormError(error) {
  const status = document.getElementById("form-status");
  status.dataset.reason = error?.data?.reason ?? error?.reason ?? "";
  status.textContent = error?.message ?? "";
}

/** The register, log-in or password form: every keystroke goes to the daemon, every verdict comes back. */
async function bindDaemonForm(connection, onSubmit) {
  const form = document.getElementById("daemon-form");
  const name = form.dataset.form;
  const submit = document.getElementById("submit");
  let submittable = false;
  let sending = false;
  const extraReady = { ok: () => true };
  const refresh = () => { submit.disabled = !(submittable && extraReady.ok()) || sending; };
  connection.on("field", (event) => { if (event.form === name) showField({ ...event, name: event.field }); });
  connection.on("form", (event) => {
    if (event.form !== name) return;
    submittable = event.submittable;
    refresh();
  });
  const snapshot = await connection.call("form.open", { form: name });
  for (const field of snapshot.fields) showField(field);
  submittable = snapshot.submittable;
  refresh();
  for (const input of form.querySelectorAll("[data-field]")) {
    input.addEventListener("input", () => {
      connection.call("form.input", { form: name, field: input.dataset.field, value: input.value })
        .catch(showFormError);
    });
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (submit.disabled) return;
    sending = true;
    refresh();
    showFormError(null);
    try {
      await onSubmit(form);
    } catch (error) {
      showFormError(error);
    } finally {
      sending = false;
      refresh();
    }
  });
  return { refresh, extraReady, reopen: async () => {
    form.reset();
    const again = await connection.call("form.open", { form: name });
    for (const field of again.fields) showField(field);
    submittable = again.submittable;
    refresh();
  } };
}

/** POST /register or /login: the gateway talks to rosterd and sets the HttpOnly cookie. */
async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ ...body, locale }),
    credentials: "same-origin",
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw answer;
  return answer;
}

function values(form, names) {
  const result = {};
  for (const name of names) {
    const input = form.querySelector(`[name="${name}"]`);
    if (input && input.value !== "") result[name] = input.value;
  }
  return result;
}

// --- passkeys (WebAuthn) ------------------------------------------------------------------------------------
// The daemon is the relying party and speaks the WebAuthn JSON shapes (binary as base64url without padding); the
// page turns them into what navigator.credentials takes, and the credential back into JSON, with the browser's own
// PublicKeyCredential.parse*OptionsFromJSON and toJSON() where it has them, by hand where it does not.

const b64u = {
  encode(data) {
    const bytes = data instanceof ArrayBuffer ? new Uint8Array(data)
      : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    let text = "";
    for (const byte of bytes) text += String.fromCharCode(byte);
    return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  },
  decode(text) {
    const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0)).buffer;
  },
};

function passkeysSupported() {
  return typeof window.PublicKeyCredential === "function" && typeof navigator.credentials?.create === "function";
}

function descriptors(list) {
  return (list ?? []).map((descriptor) => ({ ...descriptor, id: b64u.decode(descriptor.id) }));
}

/** passkey.register_begin's PublicKeyCredentialCreationOptionsJSON as navigator.credentials.create takes it. */
function creationOptions(json) {
  if (typeof PublicKeyCredential.parseCreationOptionsFromJSON === "function") {
    return PublicKeyCredential.parseCreationOptionsFromJSON(json);
  }
  return { ...json, challenge: b64u.decode(json.challenge), user: { ...json.user, id: b64u.decode(json.user.id) },
           excludeCredentials: descriptors(json.excludeCredentials) };
}

/** auth.passkey_begin's PublicKeyCredentialRequestOptionsJSON as navigator.credentials.get takes it. */
function requestOptions(json) {
  if (typeof PublicKeyCredential.parseRequestOptionsFromJSON === "function") {
    return PublicKeyCredential.parseRequestOptionsFromJSON(json);
  }
  return { ...json, challenge: b64u.decode(json.challenge), allowCredentials: descriptors(json.allowCredentials) };
}

/** A new or asserted credential as RegistrationResponseJSON / AuthenticationResponseJSON. */
function credentialJSON(credential) {
  if (typeof credential.toJSON === "function") return credential.toJSON();
  const r = credential.response;
  const shaped = { id: credential.id, rawId: b64u.encode(credential.rawId), type: credential.type,
                   clientExtensionResults: credential.getClientExtensionResults() };
  if (credential.authenticatorAttachment) shaped.authenticatorAttachment = credential.authenticatorAttachment;
  if ("attestationObject" in r) {
    shaped.response = { clientDataJSON: b64u.encode(r.clientDataJSON),
                        attestationObject: b64u.encode(r.attestationObject) };
    if (typeof r.getAuthenticatorData === "function") {
      shaped.response.authenticatorData = b64u.encode(r.getAuthenticatorData());
    }
    const key = typeof r.getPublicKey === "function" ? r.getPublicKey() : null;
    if (key) shaped.response.publicKey = b64u.encode(key);
    if (typeof r.getPublicKeyAlgorithm === "function") shaped.response.publicKeyAlgorithm = r.getPublicKeyAlgorithm();
    if (typeof r.getTransports === "function") shaped.response.transports = r.getTransports();
    return shaped;
  }
  shaped.response = { clientDataJSON: b64u.encode(r.clientDataJSON),
                      authenticatorData: b64u.encode(r.authenticatorData), signature: b64u.encode(r.signature) };
  if (r.userHandle) shaped.response.userHandle = b64u.encode(r.userHandle);
  return shaped;
}

// What the browser's own refusals mean to a person; the daemon's refusals (passkey_rejected with its why, and the
// rest) come with their message in the page's language already.
const BROWSER_REFUSALS = { NotAllowedError: "passkey_cancelled", AbortError: "passkey_cancelled",
                           InvalidStateError: "passkey_exists", SecurityError: "passkey_insecure",
                           NotSupportedError: "passkey_unsupported_options" };

/** Shows why a passkey step failed under `element`: data-reason (the daemon's reason or the browser's error name)
 * and data-why (passkey_rejected's) for whoever reads the page, and the words. */
function showPasskeyProblem(element, error) {
  const fromBrowser = error instanceof DOMException || error instanceof Error;
  element.dataset.reason = fromBrowser ? error.name : (error?.data?.reason ?? error?.reason ?? "");
  element.dataset.why = fromBrowser ? "" : (error?.data?.why ?? "");
  if (fromBrowser) {
    const key = BROWSER_REFUSALS[error.name];
    element.textContent = key ? say(key) : say("passkey_failed", { name: error.name });
  } else {
    element.textContent = error?.message || say("connection_lost");
  }
}

function showPasskeyDone(element, text) {
  element.dataset.reason = "";
  element.dataset.why = "";
  element.textContent = text;
}

async function registerPage(connection) {
  await bindDaemonForm(connection, async (form) => {
    const answer = await post("/register", values(form, ["username", "password", "email"]));
    location.assign(answer.redirect);
  });
}

// A one-time or mailed code as typed: six digits, spaces allowed (the daemon judges the digits).
const sixDigits = /^\s*\d{3}\s*\d{3}\s*$/;

async function loginPage(connection) {
  const codeField = document.getElementById("code-field");
  const code = document.getElementById("code");
  const bound = await bindDaemonForm(connection, async (form) => {
    try {
      const answer = await post("/login", values(form, ["username", "password", "code"]));
      location.assign(answer.redirect);
    } catch (error) {
      if (error.reason === "code_required") {
        // The daemon's log-in form opens its code field only after its own submit, which the gateway keeps
        // for itself (it answers a token); so the page asks for the code here and the next POST carries it.
        codeField.hidden = false;
        bound.refresh();
        code.focus();
      }
      throw error;
    }
  });
  bound.extraReady.ok = () => codeField.hidden || sixDigits.test(code.value);
  code.addEventListener("input", bound.refresh);
  passkeyLogIn(connection);
}

// A conditional request's challenge lives 5 minutes in the daemon: a fresh one is asked for before it runs out.
const CONDITIONAL_REFRESH_MS = 4.5 * 60 * 1000;

/** "Log in with a passkey", and the passkeys the browser offers in the username field's autofill (conditional
 * mediation): the ceremony runs on this tab's own connection, whose challenge it is; the gateway answers a
 * successful auth.passkey_finish with a one-time ticket in place of the token, and POST /passkey-login trades it
 * for the cookie, as POST /login sets it. An account with two-step log-in and a passkey that did not verify the
 * user (code_required) is asked for its code next, on the same connection, which holds the verified assertion. */
function passkeyLogIn(connection) {
  const button = document.getElementById("passkey-login");
  const status = document.getElementById("passkey-status");
  const codeForm = document.getElementById("passkey-code-form");
  const code = document.getElementById("passkey-code");
  const codeSubmit = document.getElementById("passkey-code-submit");
  const username = document.getElementById("username");
  if (!passkeysSupported()) return;
  button.hidden = false;

  const loggedIn = async (answer) => {
    const done = await post("/passkey-login", { ticket: answer.ticket ?? "" });
    location.assign(done.redirect);
  };
  const askForCode = () => {
    codeForm.hidden = false;
    status.dataset.reason = "code_required";
    status.dataset.why = "";
    status.textContent = say("passkey_code_intro");
    code.value = "";
    codeSubmit.disabled = true;
    code.focus();
  };
  const finish = async (credential) => {
    try {
      await loggedIn(await connection.call("auth.passkey_finish", { credential: credentialJSON(credential) }));
    } catch (error) {
      if (error?.data?.reason === "code_required") askForCode();
      else throw error;
    }
  };

  // The conditional request running, if any ({controller, settled, used}); a promise, as starting one takes a
  // round trip and a click meanwhile must wait for it (the browser runs one request at a time).
  let conditional = Promise.resolve(null);
  const startConditional = async () => {
    if (typeof PublicKeyCredential.isConditionalMediationAvailable !== "function"
        || !(await PublicKeyCredential.isConditionalMediationAvailable())) return null;
    const { options } = await connection.call("auth.passkey_begin", {});
    const running = { controller: new AbortController(), used: false };
    running.settled = navigator.credentials.get({ mediation: "conditional", signal: running.controller.signal,
                                                  publicKey: requestOptions(options) })
      .then(async (credential) => {
        // The person picked a passkey from the autofill. This request is over, whatever the daemon says of it:
        // the next attempt is theirs to start (a failure is never retried by itself).
        running.used = true;
        conditional = Promise.resolve(null);
        status.textContent = "";
        codeForm.hidden = true;
        try {
          await finish(credential);
        } catch (error) {
          showPasskeyProblem(status, error);
        }
      }, () => {
        // Aborted (a click, a refresh) or nothing to offer: nothing to say.
      });
    setTimeout(async () => {
      if ((await conditional) !== running || running.used) return;
      running.controller.abort();
      await running.settled;
      if ((await conditional) === running) conditional = startConditional().catch(() => null);
    }, CONDITIONAL_REFRESH_MS);
    return running;
  };
  conditional = startConditional().catch(() => null);

  button.addEventListener("click", async () => {
    if (button.disabled) return;
    button.disabled = true;
    status.textContent = "";
    delete status.dataset.reason;
    codeForm.hidden = true;
    try {
      const running = await conditional;
      conditional = Promise.resolve(null);
      if (running) {
        running.controller.abort();
        await running.settled;
        if (running.used) return;
      }
      // A typed name asks for its passkeys by id; with none the passkey finds its own user.
      const name = username.value.trim();
      const { options } = await connection.call("auth.passkey_begin", name ? { username: name } : {});
      await finish(await navigator.credentials.get({ publicKey: requestOptions(options) }));
    } catch (error) {
      showPasskeyProblem(status, error);
    } finally {
      button.disabled = false;
    }
  });

  code.addEventListener("input", () => { codeSubmit.disabled = !sixDigits.test(code.value); });
  codeForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (codeSubmit.disabled) return;
    codeSubmit.disabled = true;
    try {
      await loggedIn(await connection.call("auth.passkey_finish", { code: code.value.replace(/\s/g, "") }));
    } catch (error) {
      // The daemon keeps a verified passkey for one code: after a wrong one (or an expired wait) the passkey step
      // is to be done again.
      showPasskeyProblem(status, error);
      if (error?.data?.reason === "invalid_code") status.textContent += ` ${say("passkey_again")}`;
      codeForm.hidden = true;
      button.focus();
    } finally {
      codeSubmit.disabled = !sixDigits.test(code.value);
    }
  });
}

async function accountPage(connection) {
  const account = await connection.call("account.show");
  document.getElementById("account-username").textContent = account.username;
  document.getElementById("password-username").value = account.username;
  document.getElementById("account-email").textContent = account.email ?? say("none");
  showEmailState(document.getElementById("account-email-state"), account);
  document.getElementById("account-created").textContent = new Date(account.created_at).toLocaleString(locale);
  const bound = await bindDaemonForm(connection, async () => {
    const answer = await connection.call("form.submit", { form: "password" });
    await bound.reopen();
    document.getElementById("form-status").textContent = say("password_changed", answer);
    await showSessions(connection);
  });
  const status = document.getElementById("sessions-status");
  document.getElementById("revoke-others").addEventListener("click", async () => {
    try {
      const answer = await connection.call("session.revoke_others");
      status.textContent = say("revoked_others", answer);
      await showSessions(connection);
    } catch (error) {
      status.textContent = error.message;
    }
  });
  await showSessions(connection);
  for (const echo of document.querySelectorAll(".account-username")) echo.value = account.username;
  await passkeysSection(connection);
  await appPasswordsSection(connection, account);
}

/** The CardDAV address to type into a phone, and the account's app passwords: listed, created (the password shown
 * this once, never again), removed. Against a rosterd without app passwords the section is hidden. */
async function appPasswordsSection(connection, account) {
  const section = document.getElementById("dav-section");
  const status = document.getElementById("app-password-status");
  const form = document.getElementById("app-password-form");
  const name = document.getElementById("app-password-name");
  const create = document.getElementById("app-password-create");
  const when = (ms) => (ms === null || ms === undefined ? say("never") : new Date(ms).toLocaleString(locale));
  document.getElementById("dav-address").textContent = `${location.origin}/dav/`;
  document.getElementById("dav-username").textContent = account.username;
  const show = async () => {
    const { items } = await connection.call("account.app_password_list");
    const body = document.querySelector("#app-passwords tbody");
    body.replaceChildren();
    for (const item of items) {
      const row = body.insertRow();
      row.dataset.id = String(item.id);
      row.insertCell().textContent = item.name;
      row.insertCell().textContent = when(item.created_at);
      row.insertCell().textContent = when(item.last_used_at);
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = say("remove");
      button.setAttribute("aria-label", say("remove_app_password_named", { name: item.name }));
      button.addEventListener("click", async () => {
        try {
          await connection.call("account.app_password_remove", { id: item.id });
          document.getElementById("app-password-new").hidden = true;
          status.textContent = say("app_password_removed", { name: item.name });
          await show();
        } catch (error) {
          status.textContent = error.message;
        }
      });
      row.insertCell().append(button);
    }
    document.getElementById("app-passwords").hidden = items.length === 0;
    document.getElementById("no-app-passwords").hidden = items.length !== 0;
  };
  try {
    await show();
  } catch (error) {
    if (error?.data?.reason === "method_not_found" || error?.data?.reason === "forbidden") {
      section.hidden = true;
      return;
    }
    status.textContent = error.message;
  }
  const refresh = () => { create.disabled = name.value.trim() === ""; };
  name.addEventListener("input", refresh);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (create.disabled) return;
    create.disabled = true;
    status.textContent = "";
    try {
      const label = name.value.trim();
      const made = await connection.call("account.app_password_create", { name: label });
      document.getElementById("app-password-once").textContent = say("app_password_once", { name: label });
      document.getElementById("app-password-value").textContent = made.password;
      document.getElementById("app-password-new").hidden = false;
      form.reset();
      await show();
    } catch (error) {
      status.textContent = error.message;
    } finally {
      refresh();
    }
  });
}

/** The account's passkeys: listed with their dates, added (the password first, then the authenticator), removed
 * (the password asked again). */
async function passkeysSection(connection) {
  const status = document.getElementById("passkey-status");
  const addForm = document.getElementById("passkey-add-form");
  const password = document.getElementById("passkey-password");
  const name = document.getElementById("passkey-name");
  const add = document.getElementById("passkey-add");
  const removeForm = document.getElementById("passkey-remove-form");
  const removePassword = document.getElementById("passkey-remove-password");
  let removing = null;
  const when = (ms) => (ms === null || ms === undefined ? say("never") : new Date(ms).toLocaleString(locale));
  const closeRemove = () => {
    removing = null;
    removeForm.hidden = true;
    removePassword.value = "";
  };
  const show = async () => {
    const { items } = await connection.call("passkey.list");
    const body = document.querySelector("#passkeys tbody");
    body.replaceChildren();
    for (const passkey of items) {
      const row = body.insertRow();
      row.dataset.id = String(passkey.id);
      row.insertCell().textContent = passkey.name;
      row.insertCell().textContent = when(passkey.created_at);
      row.insertCell().textContent = when(passkey.last_used_at);
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = say("remove");
      button.setAttribute("aria-label", say("remove_passkey_named", { name: passkey.name }));
      button.addEventListener("click", () => {
        removing = passkey;
        document.getElementById("passkey-remove-label").textContent =
          say("passkey_remove_password", { name: passkey.name });
        removeForm.hidden = false;
        removePassword.focus();
      });
      row.insertCell().append(button);
    }
    document.getElementById("passkeys").hidden = items.length === 0;
    document.getElementById("no-passkeys").hidden = items.length !== 0;
  };
  await show();
  if (!passkeysSupported()) {
    addForm.hidden = true;
    status.textContent = say("passkey_unsupported");
  }
  const refresh = () => { add.disabled = password.value === ""; };
  password.addEventListener("input", refresh);
  addForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (add.disabled) return;
    add.disabled = true;
    status.textContent = "";
    try {
      const { options } = await connection.call("passkey.register_begin", { password: password.value });
      const credential = await navigator.credentials.create({ publicKey: creationOptions(options) });
      const params = { credential: credentialJSON(credential) };
      if (name.value.trim() !== "") params.name = name.value.trim();
      const added = await connection.call("passkey.register_finish", params);
      addForm.reset();
      showPasskeyDone(status, say("passkey_added", { name: added.name }));
      await show();
    } catch (error) {
      showPasskeyProblem(status, error);
    } finally {
      refresh();
    }
  });
  document.getElementById("passkey-remove-cancel").addEventListener("click", closeRemove);
  removeForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!removing) return;
    const passkey = removing;
    try {
      await connection.call("passkey.remove", { id: passkey.id, password: removePassword.value });
      closeRemove();
      showPasskeyDone(status, say("passkey_removed", { name: passkey.name }));
      await show();
    } catch (error) {
      showPasskeyProblem(status, error);
      removePassword.select();
    }
  });
}

/** Whether the account's email is verified, with a link to the verify page while it is not. */
function showEmailState(element, account) {
  element.dataset.verified = String(account.email_verified === true);
  if (!account.email) {
    element.textContent = say("none");
    return;
  }
  element.textContent = say(account.email_verified ? "verified" : "not_verified");
  if (!account.email_verified) {
    const link = document.createElement("a");
    link.href = "/verify";
    link.textContent = say("verify_link");
    element.append(" · ", link);
  }
}

/** The verify page: "send me a code" mails one (the daemon limits how often), and the mailed code verifies. */
async function verifyPage(connection) {
  const state = document.getElementById("verify-state");
  const send = document.getElementById("send-code");
  const form = document.getElementById("verify-form");
  const code = document.getElementById("code");
  const submit = document.getElementById("submit");
  const done = document.getElementById("verify-status");
  let account = null;
  const show = (shown) => {
    account = shown;
    document.getElementById("verify-email").textContent = account.email ?? say("none");
    state.dataset.verified = String(account.email_verified === true);
    state.textContent = !account.email ? say("no_email") : say(account.email_verified ? "verified" : "not_verified");
    send.hidden = form.hidden = !account.email || account.email_verified === true;
  };
  const refresh = () => { submit.disabled = !sixDigits.test(code.value); };
  show(await connection.call("account.show"));
  code.addEventListener("input", refresh);
  send.addEventListener("click", async () => {
    send.disabled = true;
    showFormError(null);
    done.textContent = "";
    try {
      await connection.call("account.email_verify_send");
      done.textContent = say("code_sent", { email: account.email });
      code.focus();
    } catch (error) {
      showFormError(error);
    } finally {
      send.disabled = false;
    }
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (submit.disabled) return;
    submit.disabled = true;
    showFormError(null);
    try {
      await connection.call("account.email_verify", { code: code.value.replace(/\s/g, "") });
      show(await connection.call("account.show"));
      done.textContent = say("verified_now");
    } catch (error) {
      done.textContent = "";
      showFormError(error);
    } finally {
      refresh();
    }
  });
}

/** "Forgot password?": the same words follow whatever the account, since the daemon's answer is the same too. */
async function forgotPage() {
  const form = document.getElementById("forgot-form");
  const username = document.getElementById("username");
  const submit = document.getElementById("submit");
  const sent = document.getElementById("forgot-status");
  const haveCode = document.getElementById("have-code");
  let sending = false;
  const refresh = () => { submit.disabled = sending || username.value.trim() === ""; };
  username.addEventListener("input", refresh);
  refresh();
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (submit.disabled) return;
    sending = true;
    refresh();
    showFormError(null);
    sent.textContent = "";
    const name = username.value.trim();
    try {
      await post("/forgot", { username: name });
      sent.textContent = say("forgot_sent");
      haveCode.href = `/recover?user=${encodeURIComponent(name)}`;
      document.getElementById("have-code-line").hidden = false;
    } catch (error) {
      showFormError(error);
    } finally {
      sending = false;
      refresh();
    }
  });
}

/** A name for the register form the recover page borrows, nobody's: the password rules are the preset's. */
function throwawayName() {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return "recover" + [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The mailed link's page (`/recover?user=NAME&code=CODE`), or one to type them in. The daemon has no form of its
 * own for a new password without a log-in, so the page borrows the register form, under a throwaway name, for its
 * password and confirm fields: the preset's rules, live, with the register page's timing. Rules that need the
 * real name (the hardened preset's `contains_username`) are judged by `auth.recover` itself, on submit. */
async function recoverPage(connection) {
  const query = new URLSearchParams(location.search);
  const username = document.getElementById("username");
  const code = document.getElementById("code");
  username.value = query.get("user") ?? "";
  code.value = query.get("code") ?? "";
  // The code must not stay in the address bar, the history or a bookmark once it is in its field.
  if (location.search !== "") history.replaceState(null, "", location.pathname);
  const password = document.getElementById("password");
  const bound = await bindDaemonForm(connection, async () => {
    const answer = await post("/recover", { username: username.value.trim(), code: code.value.trim(),
                                            new_password: password.value });
    location.assign(answer.redirect);
  });
  bound.extraReady.ok = () => username.value.trim() !== "" && code.value.trim() !== "";
  username.addEventListener("input", bound.refresh);
  code.addEventListener("input", bound.refresh);
  bound.refresh();
  let names = 0;
  const borrow = () => connection.call("form.input", { form: "register", field: "username", value: throwawayName() });
  connection.on("field", (event) => {
    // A throwaway name someone holds after all: another one, a few times at most.
    if (event.form === "register" && event.field === "username" && event.state === "invalid" && ++names < 3) {
      borrow().catch(showFormError);
    }
  });
  await borrow();
  // The password field opens once the borrowed name is judged; until then the first empty field has the focus.
  if (username.value === "") username.focus();
  else if (code.value === "") code.focus();
}

async function showSessions(connection) {
  const { items } = await connection.call("session.list");
  const body = document.querySelector("#sessions tbody");
  body.replaceChildren();
  for (const session of items) {
    const row = body.insertRow();
    const client = row.insertCell();
    client.textContent = session.client ?? "—";
    if (session.current) {
      const mark = document.createElement("strong");
      mark.textContent = ` (${say("this_session")})`;
      client.append(mark);
    }
    row.insertCell().textContent = new Date(session.created_at).toLocaleString(locale);
    row.insertCell().textContent = new Date(session.last_used_at).toLocaleString(locale);
    const action = row.insertCell();
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = say("revoke");
    button.addEventListener("click", async () => {
      await connection.call("session.revoke", { id: session.id }).catch(() => {});
      if (!session.current) await showSessions(connection);
    });
    action.append(button);
  }
}

/** `text` as nodes, the daemon's `ranges` ([start, length] in UTF-16 code units, as JavaScript strings index)
 * inside <mark>. The daemon says what matched, so the page never folds names itself and cannot disagree with it. */
function highlighted(text, ranges) {
  const fragment = document.createDocumentFragment();
  let at = 0;
  for (const [start, length] of ranges ?? []) {
    if (start < at || start + length > text.length) continue;
    if (start > at) fragment.append(text.slice(at, start));
    const mark = document.createElement("mark");
    mark.textContent = text.slice(start, start + length);
    fragment.append(mark);
    at = start + length;
  }
  if (at < text.length) fragment.append(text.slice(at));
  return fragment;
}

async function contactsPage(connection) {
  const list = document.getElementById("results");
  const count = document.getElementById("count");
  const query = document.getElementById("query");
  let everyone = null;
  let latest = null;
  const showCount = () => {
    if (!latest) return;
    count.dataset.total = String(latest.total);
    count.textContent = latest.query === "" || everyone === null
      ? say("count_all", { total: latest.total })
      : say("count", { shown: latest.total, total: everyone });
  };
  connection.on("results", async (event) => {
    latest = event;
    // The daemon throttles the search: while a person types, the list may be an earlier query's for a moment.
    // It says which query it shows, so whoever reads it (a test, a script) knows whether it is the latest yet.
    list.dataset.query = event.query;
    list.replaceChildren();
    for (const contact of event.items) list.append(contactItem(connection, contact));
    if (event.items.length === 0) {
      const empty = document.createElement("li");
      empty.className = "empty";
      empty.textContent = say("no_matches");
      list.append(empty);
    }
    if (event.query === "") everyone = event.total;
    showCount();
    if (event.query !== "") {
      const all = await connection.call("contacts.list", { limit: 1 }).catch(() => null);
      if (all) { everyone = all.total; showCount(); }
    }
  });
  await connection.call("form.open", { form: "contacts" });
  query.addEventListener("input", () => {
    connection.call("form.input", { form: "contacts", field: "query", value: query.value }).catch(() => {});
  });
  bindAddForm(connection);
}

function contactItem(connection, contact) {
  const item = document.createElement("li");
  const name = document.createElement("span");
  name.className = "name";
  const marked = (field) => (contact.match?.field === field ? contact.match.ranges : []);
  name.append(highlighted(contact.name, marked("name")));
  item.append(name);
  for (const [key, value] of [["phone", contact.phone], ["email", contact.email], ["note", contact.note]]) {
    if (!value) continue;
    const detail = document.createElement("span");
    detail.className = key;
    detail.append(key === "phone" ? highlighted(value, marked("phone")) : value);
    item.append(" ", detail);
  }
  const remove = document.createElement("button");
  remove.type = "button";
  remove.textContent = say("remove");
  remove.setAttribute("aria-label", say("remove_named", { name: contact.name }));
  remove.addEventListener("click", async () => {
    const status = document.getElementById("form-status");
    try {
      await connection.call("contacts.remove", { id: contact.id });
      status.textContent = say("removed", { name: contact.name });
    } catch (error) {
      status.textContent = error.message;
    }
  });
  item.append(" ", remove);
  return item;
}

function bindAddForm(connection) {
  const form = document.getElementById("add-form");
  const status = document.getElementById("form-status");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    for (const line of form.querySelectorAll(".status")) { line.textContent = ""; delete line.dataset.state; }
    const params = values(form, ["name", "phone", "email", "note"]);
    try {
      const { contact } = await connection.call("contacts.add", params);
      form.reset();
      status.textContent = say("added", { name: contact.name });
      document.getElementById("contact-name").focus();
    } catch (error) {
      const field = error?.data?.field;
      const line = field ? document.getElementById(`contact-${field}-status`) : null;
      if (line) {
        line.dataset.state = "invalid";
        line.textContent = error.message;
      } else {
        status.textContent = error.message;
      }
    }
  });
}

function bindLogOut(loggedIn) {
  // The gateway drew the links from whether a cookie came; the daemon has now said whether it logs anyone in.
  for (const element of document.querySelectorAll(".logged-in-only")) element.hidden = !loggedIn;
  for (const element of document.querySelectorAll(".logged-out-only")) element.hidden = loggedIn;
  document.getElementById("logout").addEventListener("click", async () => {
    await post("/logout", {}).catch(() => {});
    location.assign("/login");
  });
}

const connection = new Connection();
const banner = document.getElementById("connection");
connection.on("closed", () => {
  banner.dataset.state = "lost";
  banner.textContent = say("connection_lost");
});
connection.on("session", (event) => {
  // A log-out in another tab, a revoked session or a password changed elsewhere ends this one too.
  if (event.user === null && needsLogIn) location.assign("/login");
});
connection.on("ready", async (event) => {
  if (needsLogIn && event.user === null) {
    location.assign("/login");
    return;
  }
  banner.dataset.state = "ready";
  banner.textContent = "";
  document.body.dataset.user = event.user ?? "";
  bindLogOut(event.user !== null);
  const pages = { register: registerPage, login: loginPage, account: accountPage, contacts: contactsPage,
                  verify: verifyPage, forgot: forgotPage, recover: recoverPage };
  try {
    await pages[page](connection);
    document.body.dataset.ready = "true";
  } catch (error) {
    banner.dataset.state = "error";
    banner.textContent = error?.message ?? say("connection_lost");
  }
});
