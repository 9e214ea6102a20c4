// The Hanamikoji board: plays, watches and replays through the server's JSON API
// (hanamikoji_env/play/server.py).  Every value from the server is set as text, never as HTML.
"use strict";

const TOKENS = ["Secret", "Trade-off", "Gift", "Competition"];
const CHARM = [2, 2, 2, 3, 3, 4, 5];
const MAX_RECORD_FILE = 64 * 1024 * 1024;  // a record file read in the browser (a game is a few KB)
const $ = (id) => document.getElementById(id);
const names = (cards) => cards.map((g) => `G${g}`).join(" ") || "-";

let game = null;          // the latest view of the game in progress
let pending = null;       // the person's selection before it is sent: {token, fixed, cards: [geisha...]}
let seenScorings = 0;     // scoring events already shown on the round-end screen
let mode = "welcome";     // welcome | play | replay
let frames = [];          // the replayed or watched game's positions
let frame = 0;
let players = ["player_0", "player_1"];
let timer = null;         // the autoplay of a replay or a watched game
let fileLines = [];       // the games of an opened record file

function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
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

function show(which) {
  mode = which;
  $("welcome").hidden = which !== "welcome";
  $("board").hidden = which === "welcome";
  $("board").dataset.mode = which;
  for (const id of ["me", "controls"]) $(id).hidden = which !== "play";
  if (which !== "play") $("offer-area").hidden = true;  // a replay tells the offer in its own words
  $("nav").hidden = which !== "replay";
  if (which !== "replay") stopTimer();
}

// ----------------------------------------------------------------- the table ---

function card(g, attrs = {}) {
  return el(attrs.onclick ? "button" : "div", { class: "card", "data-geisha": g, type: attrs.onclick ? "button" : null, ...attrs },
    [el("span", { class: "g", text: `G${g}` }), el("small", { text: `charm ${CHARM[g]}` })]);
}

function stack(n, who) {
  return el("div", { class: `stack ${who}`, title: `${n} card(s)` },
    [...Array.from({ length: n }, () => el("span", { class: "mini" })), n ? el("span", { class: "count", text: String(n) }) : ""]);
}

// A table for any view: {round, toMove, score, markers ('top'|'bottom'|null), sides, top, bottom, label}
function drawTable(t) {
  const who = (side) => (side === "top" ? t.top.name : t.bottom.name);
  const pts = (side) => `${t.score[side].charm} charm · ${t.score[side].geishas} geisha${t.score[side].geishas === 1 ? "" : "s"}`;
  $("scoreboard").replaceChildren(
    el("span", { class: "round", text: `Round ${t.round}` }),
    el("span", { class: "turn", text: t.status }),
    el("span", { class: "score top", text: `${who("top")}: ${pts("top")}` }),
    el("span", { class: "score bottom", text: `${who("bottom")}: ${pts("bottom")}` }),
    el("span", { text: `draw pile ${t.pile}` }),
  );
  for (const side of ["top", "bottom"]) {
    const p = t[side];
    const tokens = el("span", { class: "tokens" }, TOKENS.map((name, i) =>
      el("span", { class: `token ${p.tokens[i] ? "left" : "spent"}`, title: p.tokens[i] ? `${name}: not played yet` : `${name}: played`, text: name })));
    const parts = [el("strong", { text: p.name }), tokens];
    if (p.hand !== undefined) parts.push(el("span", { text: typeof p.hand === "number" ? `${p.hand} cards in hand` : `hand ${names(p.hand)}` }));
    if (p.secret) parts.push(el("span", { text: `Secret ${p.secret}` }));
    if (p.tradeoff) parts.push(el("span", { text: `Trade-off ${p.tradeoff}` }));
    $(`${side}-player`).replaceChildren(...parts);
    $(`${side}-player`).classList.toggle("to-move", t.toMove === side);
  }
  $("geishas").replaceChildren(...CHARM.map((c, g) => {
    const m = t.markers[g];
    const pill = el("span", { class: `pill ${m || "none"}`, title: m ? `favour: ${who(m)}` : "favour: nobody yet" },
      [m === "top" ? "▲" : m === "bottom" ? "▼" : "●", el("span", { class: "label", text: ` ${m ? t[m].short : "neutral"}` })]);
    const tile = el("div", { class: `tile ${m || "none"}` }, [
      el("span", { class: "name", text: `G${g}` }), el("span", { class: "charm", text: `${c} charm` }), pill,
    ]);
    return el("div", { class: "geisha", "data-geisha": g }, [stack(t.sides.top[g], "top"), tile, stack(t.sides.bottom[g], "bottom")]);
  }));
  document.querySelectorAll(".top-name").forEach((n) => { n.textContent = t.top.name; });
  document.querySelectorAll(".bottom-name").forEach((n) => { n.textContent = t.bottom.name; });
}

// The scored round: each geisha's cards on both sides (Secrets included), the markers before
// and after, the revealed Secrets and the totals.  s: {round, secrets, placed, markers_before,
// markers, points, geishas}, sides named by index 0 (bottom) and 1 (top).
function scoringTable(s, sideNames) {
  const owner = (m) => (m === null ? "neutral" : sideNames[m]);
  const rows = CHARM.map((c, g) => {
    const moved = s.markers_before[g] !== s.markers[g];
    return el("tr", { class: moved ? "moved" : null }, [
      el("th", { text: `G${g} (${c})` }),
      el("td", { text: String(s.placed[0][g]) }), el("td", { text: String(s.placed[1][g]) }),
      el("td", { text: moved ? `${owner(s.markers_before[g])} → ${owner(s.markers[g])}` : owner(s.markers[g]) }),
    ]);
  });
  return el("div", { class: "scoring" }, [
    el("p", { text: `Secrets revealed: ${sideNames[0]} G${s.secrets[0]}, ${sideNames[1]} G${s.secrets[1]}.` }),
    el("table", {}, [
      el("tr", {}, [el("th", { text: "geisha" }), el("th", { text: sideNames[0] }), el("th", { text: sideNames[1] }), el("th", { text: "favour" })]),
      ...rows,
    ]),
    el("p", { class: "totals", text: `Totals: ${sideNames[0]} ${s.points[0]} charm points, ${s.geishas[0]} geishas; ${sideNames[1]} ${s.points[1]} charm points, ${s.geishas[1]} geishas.` }),
  ]);
}

// ---------------------------------------------------------------------- play ---

function playTable(view) {
  const b = view.board;
  const opp = `Opponent (${view.opponent})`;
  const status = view.result ? "game over" : view.your_move ? "your move" : "the opponent is thinking";
  const hidden = (played, what) => (played ? what : null);
  const revealed = view.result && view.last_round ? view.last_round.secrets : null;  // the last scoring showed them
  return {
    round: view.round, status, pile: b.draw_pile_size,
    toMove: view.to_move === "you" ? "bottom" : view.to_move === "opponent" ? "top" : null,
    score: { top: view.score.opponent, bottom: view.score.you },
    markers: b.markers.map((m) => (m === "you" ? "bottom" : m === "opponent" ? "top" : null)),
    sides: { top: b.their_side, bottom: b.your_side },
    top: { name: opp, short: "opponent", tokens: b.their_tokens, hand: b.their_hand_size,
      secret: revealed ? `G${revealed[1]} (revealed)` : hidden(!b.their_tokens[0], "face down"), tradeoff: hidden(!b.their_tokens[1], "2 cards face down") },
    bottom: { name: "You", short: "you", tokens: b.your_tokens,
      secret: revealed ? `G${revealed[0]} (revealed)` : b.secret >= 0 ? `G${b.secret}` : null, tradeoff: b.tradeoff.length ? names(b.tradeoff) : null },
  };
}

function render(view) {
  const fresh = !game || game.id !== view.id;
  game = view;
  if (fresh) {
    seenScorings = view.events.filter((e) => e.kind === "scoring").length;
    if (document.activeElement) document.activeElement.blur();  // the keys play now, not the Start button
  }
  show("play");
  const b = view.board;
  const legal = new Map(view.choices.map((c) => [c.action, c.label]));
  drawTable(playTable(view));

  // the selection: a token and its cards, chosen in any order and sent together
  const turn = view.turn;
  pending = turn && turn.token !== null ? { token: turn.token, fixed: true, cards: [] } : null;  // a new position
  drawHand();
  $("private").textContent = `Your Secret: ${b.secret >= 0 ? `G${b.secret}` : "-"} · your Trade-off: ${names(b.tradeoff)}`;

  // the offer on the table
  const area = $("offer-area");
  area.hidden = !["GIFT_ANSWER", "SPLIT", "COMP_ANSWER"].includes(view.phase);
  $("offer").replaceChildren();
  if (view.phase === "GIFT_ANSWER") {
    $("offer-title").textContent = b.your_decision ? "A Gift for you: take one card" : "Your Gift, waiting for the opponent";
    $("offer").replaceChildren(...b.offer.map((g) => (b.your_decision && legal.has(14 + g)
      ? card(g, { "data-action": 14 + g, title: `take G${g}`, onclick: () => move(14 + g) }) : card(g))));
  } else if (view.phase === "SPLIT") {
    $("offer-title").textContent = "Competition cards to split into two pairs";
    $("offer").replaceChildren(...b.offer.map((g) => card(g)));
  } else if (view.phase === "COMP_ANSWER") {
    $("offer-title").textContent = b.your_decision ? "Competition: take pair A or B" : "Your Competition, waiting for the opponent";
    const set = (name, cards, action) => {
      const parts = [el("strong", { text: name }), ...cards.map((g) => card(g))];
      if (!legal.has(action)) return el("div", { class: "set" }, parts);
      return el("button", { class: "set", type: "button", "data-action": action, title: `take pair ${name}`, onclick: () => move(action) }, parts);
    };
    $("offer").replaceChildren(set("A", b.set_a, 21), set("B", b.set_b, 22));
  }
  drawControls();

  $("log").replaceChildren(...view.events.map((e) => el("li", { class: e.who, text: e.text })));
  $("log-area").scrollTop = $("log-area").scrollHeight;
  $("finished").hidden = !view.result;
  if (view.result) {
    $("result").textContent = view.result.text;
    $("download").href = `/api/games/${encodeURIComponent(view.id)}/record`;
  }
  showRoundEnd();
  document.body.dataset.renders = Number(document.body.dataset.renders || 0) + 1;  // for tests: a view is shown
}

function needed() {
  if (!pending) return 0;
  return (pending.fixed ? game.turn.needed : [1, 2, 3, 4][pending.token]) - pending.cards.length;
}

function drawHand() {
  const b = game.board;
  const selecting = pending && pending.token !== null;
  // each copy of a geisha in the hand is its own card: index i is the i-th card in hand order
  const chosen = new Set(pending ? pending.cards : []);
  $("hand").replaceChildren(...b.hand.map((g, i) => {
    if (!selecting) return card(g);
    const on = chosen.has(i);
    const node = card(g, { class: `card${on ? " selected" : ""}`, "aria-pressed": on ? "true" : "false",
      "data-index": i, title: on ? "selected: click to put it back" : "click to select",
      onclick: () => toggle(i), disabled: !on && needed() === 0 ? true : null });
    if (i < 9) node.prepend(el("kbd", { text: String(i + 1) }));
    return node;
  }));
  $("hand").classList.toggle("selecting", Boolean(selecting));
}

function toggle(i) {
  if (!pending) return;
  const at = pending.cards.indexOf(i);
  if (at >= 0) pending.cards.splice(at, 1);
  else if (needed() > 0) pending.cards.push(i);
  drawHand();
  drawControls();
}

function drawControls() {
  const view = game;
  const prompts = { SPLIT: "Split the Competition cards into two pairs", GIFT_ANSWER: "Take one Gift card", COMP_ANSWER: "Take a Competition pair" };
  const turn = view.turn;
  $("tokens").replaceChildren();
  $("selection-bar").hidden = true;
  let prompt = view.result ? "" : !view.your_move ? "The opponent is thinking…" : prompts[view.phase] || "";
  if (turn && !pending) {
    prompt = "Choose an action token (keys 1-" + turn.tokens.length + ")";
    $("tokens").replaceChildren(...turn.tokens.map((t, i) => el("button", { class: "choice token-choice", type: "button",
      "data-token": t.token, onclick: () => chooseToken(t.token) }, [el("kbd", { text: String(i + 1) }), ` ${t.name} (${t.cards} card${t.cards > 1 ? "s" : ""})`])));
  } else if (turn && pending) {
    const chosen = pending.cards.map((i) => game.board.hand[i]);
    const left = needed();
    prompt = left ? `${TOKENS[pending.token]}: choose ${left} more card${left > 1 ? "s" : ""} from your hand, in any order` : `${TOKENS[pending.token]}: confirm your cards`;
    $("selection-bar").hidden = false;
    $("selected").textContent = `Selected for ${TOKENS[pending.token]}: ${names(chosen)}`;
    $("confirm").disabled = left !== 0;
    $("cancel").textContent = pending.fixed ? "Clear" : "Cancel";
  }
  $("prompt").textContent = view.result ? "" : `Round ${view.round}: ${prompt}`;
  // every other legal choice is a numbered button
  const others = turn ? [] : view.choices;
  $("choices").replaceChildren(...others.map((c, i) =>
    el("button", { class: "choice", type: "button", "data-action": c.action, onclick: () => move(c.action) },
      [el("kbd", { text: String(i + 1) }), ` ${c.label}`])));
}

function chooseToken(token) {
  pending = { token, fixed: false, cards: [] };
  drawHand();
  drawControls();
}

function cancelSelection() {
  if (!pending) return;
  if (pending.fixed) pending.cards = [];
  else pending = null;
  drawHand();
  drawControls();
}

function confirmSelection() {
  if (!pending || needed() !== 0) return;
  const body = { cards: pending.cards.map((i) => game.board.hand[i]) };
  if (!pending.fixed) body.token = pending.token;
  run(async () => render(await api("POST", `/api/games/${encodeURIComponent(game.id)}/turn`, body)));
}

function move(action) {
  run(async () => render(await api("POST", `/api/games/${encodeURIComponent(game.id)}/actions`, { action })));
}

// The round-end screen: held until the person moves on, one scoring at a time.
function showRoundEnd() {
  const dialog = $("round-end");
  const scorings = game.events.filter((e) => e.kind === "scoring");
  if (dialog.open || seenScorings >= scorings.length) return;
  const s = scorings[seenScorings];
  const side = (m) => (m === "you" ? 0 : m === "opponent" ? 1 : null);
  const table = scoringTable({ ...s, markers: s.markers.map(side), markers_before: s.markers_before.map(side) }, ["you", "the opponent"]);
  $("round-end-title").textContent = s.final ? `Round ${s.round} scored: the game is over` : `Round ${s.round} scored`;
  const body = [table];
  if (s.final && game.result) body.push(el("p", { class: "final", text: game.result.text }));
  $("round-end-body").replaceChildren(...body);
  dialog.showModal();
}

$("round-end").addEventListener("close", () => {
  seenScorings += 1;
  if (mode === "play" && game) showRoundEnd();
});

// ------------------------------------------------------------ replay and watch ---

function showFrames(data, watched = false) {
  frames = data.frames;
  players = data.players;
  $("scrub").max = frames.length - 1;
  $("watch-download").hidden = !watched;
  if (watched) $("watch-download").href = URL.createObjectURL(new Blob([data.record], { type: "application/x-ndjson" }));
  $("log").replaceChildren(...frames.slice(1).map((f, i) => el("li", { class: f.seat === 0 ? "bottom" : f.seat === 1 ? "top" : "table", "data-frame": i + 1, text: f.move })));
  show("replay");
  goTo(0);
  if (watched) startTimer();
}

function frameTable(f) {
  const side = (m) => (m === 0 ? "bottom" : m === 1 ? "top" : null);
  const seat = (s) => ({
    name: `${players[s]} (player_${s})`, short: `player_${s}`, tokens: f.tokens[s], hand: f.hands[s],
    secret: f.secrets[s] >= 0 ? `G${f.secrets[s]}` : null, tradeoff: f.tradeoffs[s].length ? names(f.tradeoffs[s]) : null,
  });
  const status = f.result ? "game over" : f.scoring ? "round scored" : `${players[f.to_move]} (player_${f.to_move}) to move`;
  return {
    round: f.round, status, pile: f.draw_pile.length, toMove: side(f.to_move),
    score: { top: { charm: f.score.points[1], geishas: f.score.geishas[1] }, bottom: { charm: f.score.points[0], geishas: f.score.geishas[0] } },
    markers: f.markers.map(side), sides: { top: f.placed[1], bottom: f.placed[0] }, top: seat(1), bottom: seat(0),
  };
}

function goTo(i) {
  frame = Math.max(0, Math.min(frames.length - 1, i));
  const f = frames[frame];
  drawTable(frameTable(f));
  $("scrub").value = frame;
  $("replay-pos").textContent = `decision ${frame} of ${frames.length - 1} · round ${f.round}`;
  $("replay-move").textContent = f.move;
  const extra = [];
  const phase = { SELECT: `choosing cards for ${TOKENS[f.token]}: ${names(f.selection)}`, SPLIT: `Competition cards to split: ${names(f.offer)}`,
    GIFT_ANSWER: `Gift on the table: ${names(f.offer)}`, COMP_ANSWER: `Competition pairs: A ${names(f.offer.slice(0, 2))} | B ${names(f.offer.slice(2))}` };
  if (phase[f.phase]) extra.push(el("p", { class: "offer-line", text: phase[f.phase] }));
  if (f.scoring) {
    const previous = frames.slice(0, frame).reverse().find((x) => x.scoring && x.round < f.round);
    const before = previous ? previous.scoring.markers : Array(7).fill(-1);
    const own = (m) => (m < 0 ? null : m);
    extra.push(el("h3", { text: `Round ${f.scoring.round} scored` }),
      scoringTable({ ...f.scoring, markers: f.scoring.markers.map(own), markers_before: before.map(own) }, [`${players[0]} (player_0)`, `${players[1]} (player_1)`]));
  }
  if (f.result) extra.push(el("p", { class: "final", text: f.result.text }));
  extra.push(el("p", { class: "hidden-cards", text: `Hidden from both players: removed card G${f.removed} · draw pile ${names(f.draw_pile)} (top first)` }));
  $("replay-extra").replaceChildren(...extra);
  document.querySelectorAll("#log li").forEach((li) => li.classList.toggle("current", Number(li.dataset.frame) === frame));
  const current = document.querySelector("#log li.current");
  if (current) current.scrollIntoView({ block: "nearest" });
  if (frame === frames.length - 1) stopTimer();
}

function startTimer() {
  stopTimer();
  if (frame >= frames.length - 1) goTo(0);
  $("play-pause").textContent = "❚❚ pause";
  timer = setInterval(() => goTo(frame + 1), Number($("speed").value));
}

function stopTimer() {
  if (timer !== null) clearInterval(timer);
  timer = null;
  $("play-pause").textContent = "▶ play";
}

async function replayLine(line) {
  showFrames(await api("POST", "/api/replay", line, true));  // a record line is a JSON object
}

async function openFile(file) {
  if (file.size > MAX_RECORD_FILE) throw new Error(`a record file here is at most ${MAX_RECORD_FILE / 1048576} MB, this one is ${(file.size / 1048576).toFixed(1)} MB`);
  fileLines = (await file.text()).split("\n").filter((line) => line.trim());
  if (fileLines.length === 0) throw new Error("the file holds no game record");
  if (fileLines.length === 1) { $("pick-game").hidden = true; return replayLine(fileLines[0]); }
  $("pick-count").textContent = String(fileLines.length);
  $("pick").replaceChildren(...fileLines.map((line, i) => el("option", { value: i, text: describeLine(line, i) })));
  showForm("pick-game");
  return replayLine(fileLines[0]);
}

function describeLine(line, i) {
  try {
    const r = JSON.parse(line);
    const who = Array.isArray(r.players) ? r.players.map(String).join(" vs ") : "?";
    const w = r.result ? r.result.winner : null;
    const won = w === 0 || w === 1 ? `player_${w} won` : w === -1 ? "a draw" : "";
    return `game ${i + 1}: ${who}${won ? `, ${won}` : ""}`.slice(0, 120);
  } catch {
    return `game ${i + 1}: not JSON`;
  }
}

// ----------------------------------------------------------------- wiring ---

function showForm(id) {
  for (const f of ["new-game", "watch-game", "pick-game"]) $(f).hidden = f !== id;
}

$("show-new").addEventListener("click", () => showForm("new-game"));
$("show-watch").addEventListener("click", () => showForm("watch-game"));
$("show-rules").addEventListener("click", () => $("rules").showModal());
$("new-game").addEventListener("submit", (event) => {
  event.preventDefault();
  const seed = $("seed").value === "" ? null : Number($("seed").value);
  run(async () => render(await api("POST", "/api/games", { opponent: $("opponent").value, seat: Number($("seat").value), seed })));
});
$("watch-game").addEventListener("submit", (event) => {
  event.preventDefault();
  const seed = $("watch-seed").value === "" ? null : Number($("watch-seed").value);
  run(async () => showFrames(await api("POST", "/api/watch", { players: [$("watch-0").value, $("watch-1").value], seed }), true));
});
$("pick-game").addEventListener("submit", (event) => {
  event.preventDefault();
  run(() => replayLine(fileLines[Number($("pick").value)]));
});
$("replay-this").addEventListener("click", () => run(async () => {
  const response = await fetch(`/api/games/${encodeURIComponent(game.id)}/record`);
  if (!response.ok) throw new Error((await response.json()).detail);
  await replayLine((await response.text()).trim());
}));
$("upload").addEventListener("change", () => run(async () => {
  const file = $("upload").files[0];
  $("upload").value = "";
  if (file) await openFile(file);
}));
$("confirm").addEventListener("click", confirmSelection);
$("cancel").addEventListener("click", cancelSelection);
$("first").addEventListener("click", () => goTo(0));
$("prev").addEventListener("click", () => goTo(frame - 1));
$("next").addEventListener("click", () => goTo(frame + 1));
$("last").addEventListener("click", () => goTo(frames.length - 1));
$("play-pause").addEventListener("click", () => (timer === null ? startTimer() : stopTimer()));
$("speed").addEventListener("change", () => { if (timer !== null) startTimer(); });
$("scrub").addEventListener("input", () => goTo(Number($("scrub").value)));
$("close-replay").addEventListener("click", () => {
  $("pick-game").hidden = true;
  if (game) render(game); else show("welcome");
});

document.addEventListener("keydown", (event) => {
  if (event.target.closest && event.target.closest("input, select, textarea, dialog")) return;  // the slider moves itself
  if (event.key === "Enter" && event.target.closest && event.target.closest("button, a")) return;  // its own click
  if (event.key === "?") { $("rules").showModal(); return; }
  if (mode === "replay") {
    if (event.key === "ArrowRight") goTo(frame + 1);
    else if (event.key === "ArrowLeft") goTo(frame - 1);
    else return;
    event.preventDefault();
    return;
  }
  if (mode !== "play" || !game || !game.your_move || $("round-end").open) return;
  const n = Number(event.key);
  if (event.key === "Enter") confirmSelection();
  else if (event.key === "Escape") cancelSelection();
  else if (Number.isInteger(n) && n >= 1) {
    if (game.turn && !pending && n <= game.turn.tokens.length) chooseToken(game.turn.tokens[n - 1].token);
    else if (game.turn && pending && n <= game.board.hand.length) toggle(n - 1);
    else if (!game.turn && n <= game.choices.length) move(game.choices[n - 1].action);
    else return;
  } else return;
  event.preventDefault();
});

run(async () => {
  const data = await api("GET", "/api/opponents");
  const options = () => data.opponents.map((o) => el("option", { value: o, text: o }));
  $("opponent").replaceChildren(...options());
  $("watch-0").replaceChildren(...options());
  $("watch-1").replaceChildren(...options());
  $("opponent").value = data.default;
  $("watch-0").value = data.default;
  $("watch-1").value = data.opponents.find((o) => o !== data.default) || data.default;
});
