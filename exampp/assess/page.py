"""The assessors' page: one HTML shell, its stylesheet and its script, served by
:mod:`exampp.assess.server`. The shell holds no data; the script fills it from the JSON API with
``textContent`` only, so that no text of a query, passage or note is ever parsed as HTML, and the
server's Content-Security-Policy lets no inline script run even if one were injected."""
from __future__ import annotations

from html import escape


def page_html(title: str) -> str:
    """The page, titled ``title`` (escaped)."""
    return _HTML.replace("{title}", escape(title))


_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · exampp assess</title>
<link rel="stylesheet" href="assess.css">
<script src="assess.js" defer></script>
</head>
<body>
<header class="bar">
  <div class="brand">exampp <b>assess</b></div>
  <div class="title">{title}</div>
  <div class="progress" id="progress" hidden>
    <div class="meter" aria-hidden="true"><div id="meter-fill"></div></div>
    <span id="progress-text"></span>
  </div>
  <div class="who" id="who" hidden>
    <span id="who-name"></span><button id="signout" class="link" type="button">Sign out</button>
  </div>
</header>
<main>
<section id="signin" class="card signin" hidden>
  <h1>Judge the sample</h1>
  <p>Each pair shows a query and a passage (or a system's answer and a nugget). Read them and give the
  grade that fits, with the number keys. Your labels are saved as you give them, under your name.</p>
  <form id="signin-form">
    <label for="name">Your name</label>
    <div class="row"><input id="name" name="name" autocomplete="username" maxlength="100" required
      spellcheck="false" placeholder="e.g. alice or a.smith"><button type="submit">Start judging</button></div>
    <p class="hint">One word, no spaces: it names you in the exported qrels.</p>
  </form>
  <p class="error" id="signin-error" role="alert"></p>
</section>
<div id="judge" class="layout" hidden>
  <section class="card pair" aria-labelledby="query">
    <div class="ids" id="pair-ids"></div>
    <h1 id="query"></h1>
    <dl class="guidance" id="guidance">
      <div id="description-row"><dt>Description</dt><dd id="description"></dd></div>
      <div id="narrative-row"><dt>Narrative</dt><dd id="narrative"></dd></div>
    </dl>
    <h2 class="label" id="text-label">Passage</h2>
    <div class="text" id="text"></div>
    <div id="nugget-box" hidden>
      <h2 class="label">Nugget: does the answer support it?</h2>
      <div class="nugget" id="nugget"></div>
    </div>
    <div class="grades" id="grades" role="group" aria-label="Grades"></div>
    <label class="note-label" for="note">Note
      <span class="muted">(optional, saved with the grade; Esc leaves the field)</span></label>
    <textarea id="note" rows="2" maxlength="10000" placeholder="Anything unclear about this pair?"></textarea>
    <div class="actions">
      <button id="undo" class="secondary" type="button">Undo last label <kbd>u</kbd></button>
      <span id="status" role="status" aria-live="polite"></span>
    </div>
  </section>
  <aside class="side">
    <section class="card">
      <h2>Keys</h2>
      <ul class="keys" id="keys"></ul>
    </section>
    <section class="card">
      <h2>Your labels <span class="muted" id="mine"></span></h2>
      <ol class="recent" id="recent"></ol>
    </section>
  </aside>
</div>
<section id="done" class="card done" hidden>
  <h1>Nothing left to judge</h1>
  <p id="done-text"></p>
  <p><button id="undo-done" class="secondary" type="button">Undo last label <kbd>u</kbd></button></p>
</section>
</main>
</body>
</html>
"""

CSS = """
:root { color-scheme: light; --ink: #1d2330; --muted: #5d6678; --line: #dde2ea; --bg: #f4f6f9; --card: #fff;
        --accent: #2458d6; --accent-soft: #e8eefc; --ok: #1d7a46; --bad: #b42318; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       background: var(--bg); }
.bar { display: flex; align-items: center; gap: 1.2rem; padding: .6rem 1.4rem; background: #1d2330; color: #fff;
       position: sticky; top: 0; z-index: 1; flex-wrap: wrap; }
.brand { font-weight: 500; letter-spacing: .02em; } .brand b { color: #9db8ff; }
.title { color: #c9d2e3; overflow-wrap: anywhere; }
.progress { display: flex; align-items: center; gap: .6rem; margin-left: auto; font-size: 14px; color: #dfe5f0; }
.meter { width: 180px; height: 8px; border-radius: 4px; background: #3a4458; overflow: hidden; }
#meter-fill { height: 100%; width: 0; background: #6fd39b; transition: width .25s; }
.who { display: flex; gap: .5rem; align-items: center; font-size: 14px; }
#who-name { font-weight: 600; }
button { font: inherit; cursor: pointer; border-radius: 8px; border: 1px solid var(--accent); background: var(--accent);
         color: #fff; padding: .5rem 1rem; }
button.secondary { background: #fff; color: var(--ink); border-color: var(--line); }
button.secondary:hover { border-color: var(--muted); }
button.link { background: none; border: none; color: #9db8ff; padding: 0; text-decoration: underline; }
button:focus-visible, textarea:focus-visible, input:focus-visible { outline: 3px solid #9db8ff; outline-offset: 1px; }
main { max-width: 78rem; margin: 1.4rem auto; padding: 0 1.4rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 1.2rem 1.4rem;
        box-shadow: 0 1px 2px rgba(16, 24, 40, .04); }
.signin, .done { max-width: 34rem; margin: 3rem auto; }
.signin h1, .done h1 { margin-top: 0; }
.signin .row { display: flex; gap: .6rem; margin-top: .3rem; }
.signin input { flex: 1; font: inherit; padding: .5rem .7rem; border: 1px solid var(--line); border-radius: 8px; }
.hint, .muted { color: var(--muted); font-size: 14px; font-weight: 400; }
.error { color: var(--bad); min-height: 1.5em; }
.layout { display: grid; grid-template-columns: minmax(0, 1fr) 19rem; gap: 1.2rem; align-items: start; }
.side { display: grid; gap: 1.2rem; position: sticky; top: 4.2rem; }
@media (max-width: 900px) { .layout { grid-template-columns: 1fr; } .side { position: static; } }
.ids { font: 13px ui-monospace, SFMono-Regular, Menlo, monospace; color: var(--muted); overflow-wrap: anywhere; }
.pair h1 { font-size: 1.55rem; line-height: 1.3; margin: .25rem 0 .6rem; overflow-wrap: anywhere; }
.guidance { margin: 0 0 1rem; padding: .6rem .9rem; background: var(--bg); border-radius: 8px; font-size: 15px; }
.guidance div { display: grid; grid-template-columns: 7rem 1fr; gap: .8rem; padding: .15rem 0; }
.guidance dt { color: var(--muted); } .guidance dd { margin: 0; overflow-wrap: anywhere; white-space: pre-line; }
h2.label { font-size: 13px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted);
           margin: 1rem 0 .35rem; }
.text { font-size: 17px; line-height: 1.65; max-width: 72ch; white-space: pre-wrap; overflow-wrap: anywhere;
        border-left: 4px solid var(--line); padding: .2rem 0 .2rem 1rem; }
.nugget { font-size: 17px; font-weight: 600; padding: .6rem .9rem; background: #fff7e0; border: 1px solid #f0d68a;
          border-radius: 8px; overflow-wrap: anywhere; }
.grades { display: grid; grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); gap: .6rem;
          margin: 1.4rem 0 1rem; }
.grade { display: grid; grid-template-columns: auto 1fr; gap: .1rem .6rem; text-align: left; background: #fff;
         color: var(--ink); border: 1.5px solid var(--line); padding: .6rem .75rem; align-items: start;
         align-content: start; }
.grade:hover { border-color: var(--accent); background: var(--accent-soft); }
.grade kbd { grid-row: span 2; }
.grade .name { font-weight: 600; } .grade .why { font-size: 13px; color: var(--muted); line-height: 1.35; }
.grade.chosen { border-color: var(--accent); background: var(--accent); color: #fff; }
.grade.chosen .why { color: #dfe7ff; }
.grade.was { border-style: dashed; border-color: var(--accent); }
kbd { display: inline-block; min-width: 1.6em; padding: .05em .4em; border: 1px solid #c4cad6; border-bottom-width: 2px;
      border-radius: 5px; background: #f8f9fb; color: var(--ink); font: 600 14px ui-monospace, monospace;
      text-align: center; }
.note-label { display: block; font-weight: 600; font-size: 14px; margin-bottom: .25rem; }
textarea { width: 100%; font: inherit; font-size: 15px; padding: .5rem .7rem; border: 1px solid var(--line);
           border-radius: 8px; resize: vertical; }
.actions { display: flex; align-items: center; gap: 1rem; margin-top: .8rem; flex-wrap: wrap; }
#status { font-size: 14px; color: var(--muted); } #status.ok { color: var(--ok); }
#status.bad { color: var(--bad); font-weight: 600; }
.side h2 { font-size: 15px; margin: 0 0 .6rem; }
.keys { list-style: none; margin: 0; padding: 0; font-size: 14px; display: grid; gap: .35rem; }
.keys li { display: flex; gap: .5rem; align-items: baseline; }
.recent { margin: 0; padding: 0; list-style: none; font-size: 14px; max-height: 24rem; overflow: auto; }
.recent:empty::before { content: "None yet."; color: var(--muted); }
.recent li { padding: .35rem 0; border-top: 1px solid var(--line); overflow-wrap: anywhere; }
.recent li:first-child { border-top: none; }
.recent .pair-id { font: 12px ui-monospace, monospace; color: var(--muted); display: block; }
.recent .given { font-weight: 600; } .recent .noted { color: var(--muted); display: block; }
"""

SCRIPT = r"""
"use strict";
const $ = (id) => document.getElementById(id);
const NAME_KEY = "exampp-assessor";
let setup = null, current = null, assessor = localStorage.getItem(NAME_KEY) || "", busy = false, undone = null;
let shown = 0;  // counts the pairs shown: an answer to a renewal asked before the last one is stale

async function api(path, body) {
  const options = body === undefined ? {} :
    {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)};
  let response;
  try {
    response = await fetch(path, options);
  } catch (error) {
    throw new Error("the server does not answer (is exampp assess serve running?)");
  }
  let data = null;
  try { data = await response.json(); } catch (error) { /* not JSON: told by the status below */ }
  if (!response.ok) throw new Error((data && data.error) || `${response.status} ${response.statusText}`);
  return data;
}

function show(id) {
  for (const section of ["signin", "judge", "done"]) $(section).hidden = section !== id;
  $("progress").hidden = $("who").hidden = id === "signin";
}

function say(text, kind) {
  const status = $("status");
  status.textContent = text;
  status.className = kind || "";
}

function gradeName(value) {
  const grade = setup.scale.find((g) => g.value === value);
  return grade ? `${value} ${grade.name}` : String(value);
}

function pairIds(pair) {
  return pair.nugget_id !== undefined ? `query ${pair.query_id} · run ${pair.run} · nugget ${pair.nugget_id}`
                                      : `query ${pair.query_id} · passage ${pair.doc_id}`;
}

function draftKey(pair) { return `exampp-note\t${assessor}\t${pair.query_id}\t${pair.key}`; }

function buildScale() {
  const grades = $("grades"), keys = $("keys");
  for (const grade of setup.scale) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "grade";
    button.dataset.grade = grade.value;
    const key = document.createElement("kbd"), name = document.createElement("span");
    const why = document.createElement("span");
    key.textContent = grade.value;
    name.className = "name"; name.textContent = grade.name;
    why.className = "why"; why.textContent = grade.hint;
    button.append(key, name, why);
    button.addEventListener("click", () => give(grade.value));
    grades.append(button);
    keys.append(keyLine(String(grade.value), grade.name));
  }
  keys.append(keyLine("u", "undo your last label"), keyLine("⌫", "undo, too"), keyLine("n", "write a note"),
              keyLine("Esc", "leave the note"));
  if (setup.kind === "nugget") $("text-label").textContent = "Answer";
}

function keyLine(key, what) {
  const line = document.createElement("li"), kbd = document.createElement("kbd"), text = document.createElement("span");
  kbd.textContent = key; text.textContent = what;
  line.append(kbd, text);
  return line;
}

function showProgress(progress) {
  const share = progress.needed ? progress.labels / progress.needed : 1;
  $("meter-fill").style.width = `${Math.round(100 * share)}%`;
  $("progress-text").textContent = `${progress.done} / ${progress.pairs} pairs judged · you: ${progress.mine}`;
  $("mine").textContent = `(${progress.mine})`;
}

function showPair(pair) {
  current = pair;
  shown += 1;
  $("pair-ids").textContent = pairIds(pair);
  $("query").textContent = pair.query;
  for (const field of ["description", "narrative"]) {
    $(field).textContent = pair[field] || "";
    $(`${field}-row`).hidden = !pair[field];
  }
  $("guidance").hidden = !pair.description && !pair.narrative;
  $("text").textContent = pair.text;
  $("nugget-box").hidden = pair.nugget === null;
  $("nugget").textContent = pair.nugget || "";
  const was = undone && undone.query_id === pair.query_id && undone.key === pair.key ? undone : null;
  for (const button of document.querySelectorAll(".grade")) {
    button.classList.remove("chosen");
    button.classList.toggle("was", was !== null && Number(button.dataset.grade) === was.grade);
  }
  $("note").value = localStorage.getItem(draftKey(pair)) ?? (was ? was.note : "");
  window.scrollTo(0, 0);
}

async function next() {
  showNext(await api("api/next", {assessor}));
}

function showNext(answer) {
  showProgress(answer.progress);
  if (answer.pair === null) {
    current = null;
    show("done");
    const {pairs, mine} = answer.progress;
    $("done-text").textContent = `All ${pairs} pairs have the labels they need; you gave ${mine}. Thank you!`;
  } else {
    show("judge");
    showPair(answer.pair);
  }
}

async function keepPair() {
  // Asking again renews the claim on the pair shown (a claim not renewed expires): a pair read for long
  // stays this assessor's; the progress shows what the others did meanwhile.
  if (current === null || busy || assessor === "") return;
  const asked = shown;
  try {
    const answer = await api("api/next", {assessor});
    if (busy || asked !== shown) return;  // a grade or an undo came meanwhile and showed the pair to judge
    if (answer.pair === null || answer.pair.query_id !== current.query_id || answer.pair.key !== current.key) {
      showNext(answer);
    } else {
      showProgress(answer.progress);
    }
  } catch (error) {
    say(`The server does not answer: ${error.message}`, "bad");
  }
}

async function recent() {
  const answer = await api(`api/labels?assessor=${encodeURIComponent(assessor)}`);
  const list = $("recent");
  list.replaceChildren(...answer.labels.map((label) => {
    const item = document.createElement("li"), id = document.createElement("span");
    const given = document.createElement("span");
    item.dataset.queryId = label.query_id; item.dataset.key = label.key; item.dataset.grade = label.grade;
    id.className = "pair-id"; id.textContent = `${label.query_id} ${label.key}`;
    given.className = "given"; given.textContent = gradeName(label.grade);
    item.append(id, given);
    if (label.note) {
      const note = document.createElement("span");
      note.className = "noted"; note.textContent = `“${label.note}”`;
      item.append(note);
    }
    return item;
  }));
}

async function give(value) {
  if (busy || current === null) return;
  busy = true;
  const pair = current, note = $("note").value;
  for (const button of document.querySelectorAll(".grade")) {
    button.classList.toggle("chosen", Number(button.dataset.grade) === value);
  }
  say("Saving…");
  try {
    const answer = await api("api/label", {assessor, query_id: pair.query_id, key: pair.key, grade: value, note});
    localStorage.removeItem(draftKey(pair));
    undone = null;
    say(`Saved ${pair.query_id} ${pair.key}: ${gradeName(value)}`, "ok");
    showProgress(answer.progress);
    await Promise.all([next(), recent()]);
  } catch (error) {
    for (const button of document.querySelectorAll(".grade")) button.classList.remove("chosen");
    say(`Not saved: ${error.message}`, "bad");
  } finally {
    busy = false;
  }
}

async function undo() {
  if (busy) return;
  busy = true;
  try {
    const answer = await api("api/undo", {assessor});
    if (answer.undone === null) {
      say("Nothing to undo");
    } else {
      undone = answer.undone;
      await Promise.all([next(), recent()]);
      say(`Undone: ${undone.query_id} ${undone.key} (was ${gradeName(undone.grade)}); grade it again`);
    }
  } catch (error) {
    say(`Not undone: ${error.message}`, "bad");
  } finally {
    busy = false;
  }
}

async function signIn(name) {
  assessor = name;
  try {
    await next();
  } catch (error) {
    assessor = "";
    localStorage.removeItem(NAME_KEY);
    show("signin");
    $("signin-error").textContent = error.message;
    return;
  }
  localStorage.setItem(NAME_KEY, name);
  $("name").blur();  // the keys grade from here on
  $("who-name").textContent = name;
  $("signin-error").textContent = "";
  await recent();
}

document.addEventListener("keydown", (event) => {
  if (event.target.closest && event.target.closest("textarea, input")) {
    if (event.key === "Escape") event.target.blur();
    return;  // typing a note (or a name) never grades
  }
  if (event.ctrlKey || event.metaKey || event.altKey || assessor === "" || $("signin").hidden === false) return;
  if (/^[0-9]$/.test(event.key) && setup.scale.some((g) => g.value === Number(event.key))) {
    event.preventDefault();
    give(Number(event.key));
  } else if (event.key === "u" || event.key === "Backspace") {
    event.preventDefault();
    undo();
  } else if (event.key === "n" && current !== null) {
    event.preventDefault();
    $("note").focus();
  }
});

async function start() {
  setup = await api("api/setup");
  buildScale();
  setInterval(keepPair, setup.claim_seconds * 1000 / 3);
  $("note").addEventListener("input", () => {
    if (current !== null) localStorage.setItem(draftKey(current), $("note").value);
  });
  $("undo").addEventListener("click", undo);
  $("undo-done").addEventListener("click", undo);
  $("signout").addEventListener("click", async () => {
    await api("api/signout", {assessor}).catch(() => null);
    assessor = ""; current = null;
    localStorage.removeItem(NAME_KEY);
    $("name").value = "";
    show("signin");
    $("name").focus();
  });
  $("signin-form").addEventListener("submit", (event) => {
    event.preventDefault();
    signIn($("name").value.trim());
  });
  if (assessor) {
    await signIn(assessor);
  } else {
    show("signin");
    $("name").focus();
  }
}

start().catch((error) => { document.body.textContent = `exampp assess: ${error.message}`; });
"""
