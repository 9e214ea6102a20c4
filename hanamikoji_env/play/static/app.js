// The Hanamikoji board: plays through the server's JSON API (hanamikoji_env/play/server.py).
// Every value from the server is set as text, never as HTML.
"use strict";

const TOKENS = ["Secret", "Trade-off", "Gift", "Competition"];
const CHARM = [2, 2, 2, 3, 3, 4, 5];
const $ = (id) => document.getElementById(id);
let game = null;      // the latest view of the game in progress
let frames = [];      // the replay's positions
let frame = 0;

function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") node.textContent = v;
    else if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

async function api(method, path, body, raw = false) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.body = raw ? body : JSON.stringify(body);
    options.headers["Content-Type"] = "application/json";  // the server takes JSON only
  }
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const detail = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail || response.statusText);
    throw new Error(detail);
  }
  return data;
}

function showError(error) {
  $("error").textContent = error ? String(error.message || error) : "";
  $("error").hidden = !error;
}

async function run(action) {
  try { showError(null); await action(); } catch (e) { showError(e); }
}

// ------------------------------------------------------------------ play ---

function card(g, options = {}) {
  const node = el(options.action !== undefined ? "button" : "div", { class: "card", "data-geisha": g },
    [`G${g}`, el("small", { text: `charm ${CHARM[g]}` })]);
  if (options.action !== undefined) {
    node.type = "button";
    node.dataset.action = options.action;
    node.disabled = options.action === null;
    if (options.action !== null) node.addEventListener("click", () => move(options.action));
  }
  return node;
}

function stack(n, who) {
  return el("div", { class: `stack ${who}`, title: `${n} card(s)` },
    Array.from({ length: n }, () => el("span", { class: "mini" })));
}

function geishaColumn(g, theirs, mine, marker) {
  const tile = el("div", { class: "tile" }, [
    el("span", { class: "name", text: `G${g}` }), el("span", { text: `charm ${CHARM[g]}` }),
    el("span", { class: `marker ${marker || "centre"}`, title: marker ? `favour: ${marker}` : "favour: nobody yet" }),
  ]);
  return el("div", { class: "geisha" }, [stack(theirs, "opp"), tile, stack(mine, "you")]);
}

function tokenList(left) {
  return TOKENS.filter((_, t) => left[t]).join(", ") || "none";
}

function render(view) {
  game = view;
  const b = view.board;
  const legal = new Map(view.choices.map((c) => [c.action, c.label]));
  $("play").hidden = false;
  $("replay").hidden = true;
  $("opp-name").textContent = view.opponent;
  $("opp-hand").textContent = b.their_hand_size;
  $("opp-tokens").textContent = tokenList(b.their_tokens);
  $("my-tokens").textContent = tokenList(b.your_tokens);
  $("pile").textContent = b.draw_pile_size;
  $("geishas").replaceChildren(...CHARM.map((_, g) => geishaColumn(g, b.their_side[g], b.your_side[g], b.markers[g])));

  // the hand: a card is a button when adding it to the selection is legal
  $("hand").replaceChildren(...b.hand.map((g) => card(g, { action: legal.has(4 + g) ? 4 + g : null })));
  const secret = b.secret >= 0 ? `G${b.secret}` : "-";
  const selection = b.selection.length ? ` · selected for ${TOKENS[b.token]}: ${b.selection.map((g) => `G${g}`).join(" ")}` : "";
  $("private").textContent = `Your Secret: ${secret} · your Trade-off: ${b.tradeoff.map((g) => `G${g}`).join(" ") || "-"}${selection}`;

  // the offer on the table
  const area = $("offer-area");
  area.hidden = !["GIFT_ANSWER", "SPLIT", "COMP_ANSWER"].includes(view.phase);
  $("offer").replaceChildren();
  if (view.phase === "GIFT_ANSWER") {
    $("offer-title").textContent = b.your_decision ? "A Gift for you: take one card" : "Your Gift, waiting for the opponent";
    $("offer").replaceChildren(...b.offer.map((g) => card(g, b.your_decision ? { action: legal.has(14 + g) ? 14 + g : null } : {})));
  } else if (view.phase === "SPLIT") {
    $("offer-title").textContent = "Competition cards to split into two sets";
    $("offer").replaceChildren(...b.offer.map((g) => card(g)));
  } else if (view.phase === "COMP_ANSWER") {
    $("offer-title").textContent = b.your_decision ? "Competition: take set A or B" : "Your Competition, waiting for the opponent";
    const set = (name, cards, action) => {
      const parts = [el("strong", { text: name }), ...cards.map((g) => card(g))];
      if (!legal.has(action)) return el("div", { class: "set" }, parts);
      return el("button", { class: "set", type: "button", "data-action": action, title: `take set ${name}`, onclick: () => move(action) }, parts);
    };
    $("offer").replaceChildren(set("A", b.set_a, 21), set("B", b.set_b, 22));
  }

  // every legal choice is also a button
  $("choices").replaceChildren(...view.choices.map((c) =>
    el("button", { class: "choice", type: "button", "data-action": c.action, text: c.label, onclick: () => move(c.action) })));
  const prompts = { TOKEN: "Choose an action token", SELECT: `Choose the cards for ${TOKENS[b.token]}`,
    SPLIT: "Split the Competition cards", GIFT_ANSWER: "Take one Gift card", COMP_ANSWER: "Take a Competition set" };
  $("prompt").textContent = view.result ? "" : view.your_move ? `Round ${view.round}: ${prompts[view.phase]}` : "The opponent is thinking…";

  $("log").replaceChildren(...view.events.map((e) => el("li", { class: e.who, text: e.text })));
  $("log-area").scrollTop = $("log-area").scrollHeight;
  $("finished").hidden = !view.result;
  if (view.result) {
    $("result").textContent = view.result.text;
    $("download").href = `/api/games/${encodeURIComponent(view.id)}/record`;
  }
  document.body.dataset.renders = Number(document.body.dataset.renders || 0) + 1;  // for tests: a view is shown
}

function move(action) {
  run(async () => render(await api("POST", `/api/games/${encodeURIComponent(game.id)}/actions`, { action })));
}

// ---------------------------------------------------------------- replay ---

function showReplay(data) {
  frames = data.frames;
  $("replay-players").textContent = `${data.players[0]} (player_0) vs ${data.players[1]} (player_1)`;
  $("scrub").max = frames.length - 1;
  $("play").hidden = true;
  $("replay").hidden = false;
  goTo(0);
}

function goTo(i) {
  frame = Math.max(0, Math.min(frames.length - 1, i));
  const f = frames[frame];
  $("scrub").value = frame;
  $("replay-pos").textContent = `position ${frame} of ${frames.length - 1} · round ${f.round}`;
  $("replay-move").textContent = f.move ? `Move: ${f.move}` : "The first deal";
  const names = (cards) => cards.map((g) => `G${g}`).join(" ") || "-";
  const rows = [
    ["charm", ...CHARM],
    ["player_1 side", ...f.placed[1]],
    ["marker", ...f.markers.map((m) => (m < 0 ? "·" : `player_${m}`))],
    ["player_0 side", ...f.placed[0]],
  ];
  const table = el("table", {}, [
    el("tr", {}, [el("th"), ...CHARM.map((_, g) => el("th", { text: `G${g}` }))]),
    ...rows.map((r) => el("tr", {}, r.map((x) => el("td", { text: String(x) })))),
  ]);
  const facts = [0, 1].map((s) => el("p", { text:
    `player_${s}: hand ${names(f.hands[s])} · Secret ${f.secrets[s] >= 0 ? `G${f.secrets[s]}` : "-"} · ` +
    `Trade-off ${names(f.tradeoffs[s])} · tokens left ${tokenList(f.tokens[s])}` }));
  const extra = [el("p", { text: `on the table: ${names(f.offer)} · selection ${names(f.selection)} · removed G${f.removed} · draw pile ${names(f.draw_pile)}` })];
  if (f.last_round) extra.push(el("p", { text: `last scoring (round ${f.last_round.round}): points ${f.last_round.points.join("-")}, geishas ${f.last_round.geishas.join("-")}` }));
  if (f.winner !== null) extra.push(el("p", { class: "winner", text: f.winner < 0 ? "A draw" : `player_${f.winner} wins` }));
  $("replay-board").replaceChildren(table, ...facts, ...extra);
}

async function replayText(text) {
  const lines = text.split("\n").filter((line) => line.trim());
  if (lines.length !== 1) throw new Error(`send one game record, got ${lines.length} lines`);
  showReplay(await api("POST", "/api/replay", lines[0], true));  // a record line is a JSON object
}

// ----------------------------------------------------------------- wiring ---

$("new-game").addEventListener("submit", (event) => {
  event.preventDefault();
  const seed = $("seed").value === "" ? null : Number($("seed").value);
  run(async () => render(await api("POST", "/api/games", { opponent: $("opponent").value, seat: Number($("seat").value), seed })));
});
$("replay-this").addEventListener("click", () => run(async () => {
  const response = await fetch(`/api/games/${encodeURIComponent(game.id)}/record`);
  if (!response.ok) throw new Error((await response.json()).detail);
  await replayText(await response.text());
}));
$("upload").addEventListener("change", () => run(async () => {
  const file = $("upload").files[0];
  if (file) await replayText(await file.text());
  $("upload").value = "";
}));
$("first").addEventListener("click", () => goTo(0));
$("prev").addEventListener("click", () => goTo(frame - 1));
$("next").addEventListener("click", () => goTo(frame + 1));
$("last").addEventListener("click", () => goTo(frames.length - 1));
$("scrub").addEventListener("input", () => goTo(Number($("scrub").value)));
$("back-to-play").addEventListener("click", () => { $("replay").hidden = true; if (game) $("play").hidden = false; });
document.addEventListener("keydown", (event) => {
  if ($("replay").hidden) return;
  if (event.key === "ArrowRight") goTo(frame + 1);
  if (event.key === "ArrowLeft") goTo(frame - 1);
});

run(async () => {
  const data = await api("GET", "/api/opponents");
  $("opponent").replaceChildren(...data.opponents.map((o) => el("option", { value: o, text: o })));
  $("opponent").value = data.default;
});
