// The Hanamikoji board: plays, watches and replays through the server's JSON API
// (hanamikoji_env/play/server.py).  Every value from the server is set as text, never as HTML.
"use strict";

const TOKENS = ["Secret", "Trade-off", "Gift", "Competition"];
const CHARM = [2, 2, 2, 3, 3, 4, 5];
const MAX_RECORD_FILE = 64 * 1024 * 1024;  // a record file read in the browser (a game is a few KB)
const $ = (id) => document.getElementById(id);
// each geisha's name and colour, from the server (hanamikoji_env/play/geishas.py); numbers until then
let GEISHAS = CHARM.map((charm, g) => ({ name: `G${g}`, charm, colour: "#888888" }));
const label = (g) => `${GEISHAS[g].name} ${GEISHAS[g].charm}`;
const names = (cards) => cards.map(label).join(", ") || "-";
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

let game = null;          // the latest view of the game in progress
let pending = null;       // the person's selection before it is sent: {token, fixed, cards: [geisha...]}
let seenScorings = 0;     // scoring events already shown on the round-end screen
let mode = "welcome";     // welcome | play | replay
let frames = [];          // the replayed or watched game's positions
let frame = 0;
let players = ["player_0", "player_1"];  // how the replay calls its seats (the server's "names")
let spoilerFree = false;  // a watched game's log grows as it is shown
let timer = null;         // the autoplay of a replay or a watched game
let fileLines = [];       // the games of an opened record file
let busy = false;         // a move is on its way, or the opponent's is being shown: the controls wait
let pick = null;          // an answer chosen on the cards, sent on Confirm: {action, text} or {split: [offer index...]}
let drawn = null;         // the table last drawn, to mark what the last move changed
let marks = null;         // what it changed (see changes()), marked on the table until the next move
let pace = 700;           // ms between the opponent's moves as they are shown; 0: at once
let lastStart = null;     // the settings of the game last started, for Play again

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

// A geisha's colour on a node, as a CSS variable (the stylesheet decides where it shows)
function tint(node, g) {
  node.style.setProperty("--gc", GEISHAS[g].colour);
  return node;
}

function card(g, attrs = {}) {
  return tint(el(attrs.onclick ? "button" : "div", { class: "card", "data-geisha": g, type: attrs.onclick ? "button" : null, title: label(g), ...attrs },
    [el("span", { class: "band" }), el("span", { class: "charm-badge", text: String(GEISHAS[g].charm) }), el("span", { class: "g", text: GEISHAS[g].name })]), g);
}

function stack(n, who, g) {
  return el("div", { class: `stack ${who}`, title: `${plural(n, "card")} of ${GEISHAS[g].name}` },
    [...Array.from({ length: n }, () => tint(el("span", { class: "mini" }), g)), n ? el("span", { class: "count", text: String(n) }) : ""]);
}

// A table for any view: {round, toMove, score, markers ('top'|'bottom'|null), sides, top, bottom, label}
// What changed from table a to table b: the stacks, markers and tokens, and a new offer
function changes(a, b) {
  const m = { top: [], bottom: [], tiles: [], tokens: { top: [], bottom: [] }, offer: Boolean(b.offer) && b.offer !== a.offer };
  CHARM.forEach((_, g) => {
    for (const side of ["top", "bottom"]) if (a.sides[side][g] !== b.sides[side][g]) m[side].push(g);
    if (a.markers[g] !== b.markers[g]) m.tiles.push(g);
  });
  for (const side of ["top", "bottom"]) {
    b[side].tokens.forEach((left, i) => { if (a[side].tokens[i] && !left && a[side].playing !== i) m.tokens[side].push(i); });
    if (b[side].playing !== null && b[side].playing !== undefined && b[side].playing !== a[side].playing) m.tokens[side].push(b[side].playing);
  }
  m.any = m.offer || [m.top, m.bottom, m.tiles, m.tokens.top, m.tokens.bottom].some((x) => x.length);
  return m;
}

function drawTable(t) {
  if (drawn && drawn.round === t.round && drawn.mode === mode) {
    const m = changes(drawn, t);
    if (m.any) marks = m;  // an unchanged table keeps the last move's marks
  } else marks = null;  // a new deal, or another game
  drawn = { ...t, mode };
  const marked = (node, on) => { if (on) node.dataset.last = "1"; return node; };
  const who = (side) => (side === "top" ? t.top.name : t.bottom.name);
  const pts = (side) => `${t.score[side].charm} charm · ${t.score[side].geishas} geisha${t.score[side].geishas === 1 ? "" : "s"}`;
  $("scoreboard").replaceChildren(
    el("span", { class: "round", text: `Round ${t.round}` }),
    el("span", { class: "turn", text: t.status }),
    el("span", { class: "score top", text: `${who("top")}: ${pts("top")}` }),
    el("span", { class: "score bottom", text: `${who("bottom")}: ${pts("bottom")}` }),
    el("span", { text: t.pile ? `draw pile: ${plural(t.pile, "card")}` : "draw pile: empty" }),
    t.practice ? el("span", { class: "practice", title: "the seed was chosen, so the deal was known: a practice game", text: "practice game" }) : "",
  );
  for (const side of ["top", "bottom"]) {
    const p = t[side];
    const state = (i) => (p.playing === i ? "playing" : p.tokens[i] ? "left" : "spent");
    const title = { left: "not played yet", spent: "played", playing: "being played now" };
    const tokens = el("span", { class: "tokens" }, TOKENS.map((name, i) =>
      marked(el("span", { class: `token ${state(i)}`, title: `${name}: ${title[state(i)]}`, text: name }), marks && marks.tokens[side].includes(i))));
    const parts = [el("strong", { text: p.name }), tokens];
    if (p.hand !== undefined) parts.push(el("span", { text: typeof p.hand === "number" ? `${plural(p.hand, "card")} in hand` : `hand ${names(p.hand)}` }));
    parts.push(el("span", { class: "slot", text: `Secret: ${p.secret || "-"}` }));
    parts.push(el("span", { class: "slot", text: `Trade-off: ${p.tradeoff || "-"}` }));
    $(`${side}-player`).replaceChildren(...parts);
    $(`${side}-player`).classList.toggle("to-move", t.toMove === side);
  }
  $("geishas").replaceChildren(...CHARM.map((c, g) => {
    const m = t.markers[g];
    const pill = el("span", { class: `pill ${m || "none"}`, title: m ? `favour: ${who(m)}` : "favour: nobody yet" },
      [m === "top" ? "▲" : m === "bottom" ? "▼" : "●", el("span", { class: "label", text: ` ${m ? t[m].short : "neutral"}` })]);
    const tile = marked(tint(el("div", { class: `tile ${m || "none"}` }, [
      el("span", { class: "name", text: GEISHAS[g].name }), el("span", { class: "charm", text: `charm ${c}` }), pill,
    ]), g), marks && marks.tiles.includes(g));
    const side = (who) => marked(stack(t.sides[who][g], who, g), marks && marks[who].includes(g));
    return el("div", { class: "geisha", "data-geisha": g }, [side("top"), tile, side("bottom")]);
  }));
  $("offer-area").toggleAttribute("data-last", Boolean(marks && marks.offer));
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
      el("th", { class: "geisha-name" }, [tint(el("span", { class: "swatch" }), g), label(g)]),
      el("td", { text: String(s.placed[0][g]) }), el("td", { text: String(s.placed[1][g]) }),
      el("td", { text: moved && s.markers_before[g] !== null ? `${owner(s.markers_before[g])} → ${owner(s.markers[g])}` : moved ? `→ ${owner(s.markers[g])}` : owner(s.markers[g]) }),
    ]);
  });
  return el("div", { class: "scoring" }, [
    el("p", { text: `Secrets revealed: ${sideNames[0]} ${label(s.secrets[0])}, ${sideNames[1]} ${label(s.secrets[1])}.` }),
    el("table", {}, [
      el("tr", {}, [el("th", { text: "geisha" }), el("th", { text: sideNames[0] }), el("th", { text: sideNames[1] }), el("th", { text: "favour" })]),
      ...rows,
    ]),
    el("p", { class: "totals", text: `Totals: ${sideNames[0]} ${s.points[0]} charm points, ${s.geishas[0]} geishas; ${sideNames[1]} ${s.points[1]} charm points, ${s.geishas[1]} geishas.` }),
  ]);
}

// ---------------------------------------------------------------------- play ---

// The Secret each side shows: once the game is over the last scoring revealed both
function secrets(view) {
  const b = view.board;
  const revealed = view.result && view.last_round ? view.last_round.secrets : null;
  return {
    you: revealed ? `${label(revealed[0])} (revealed)` : b.secret >= 0 ? label(b.secret) : null,
    opponent: revealed ? `${label(revealed[1])} (revealed)` : b.their_tokens[0] ? null : "face down",
  };
}

function playTable(view) {
  const b = view.board;
  const status = view.result ? "game over" : view.your_move ? "your move" : `${view.opponent} is thinking`;
  // a Gift or a Competition on the table is the token being played, not one left
  const offered = { GIFT_ANSWER: 2, SPLIT: 3, COMP_ANSWER: 3 }[view.phase];
  const mine = view.phase === "SPLIT" || (offered !== undefined && !b.your_decision);
  const shown = secrets(view);
  return {
    round: view.round, status, pile: b.draw_pile_size, practice: view.practice,
    offer: offered === undefined ? "" : JSON.stringify([b.offer, b.set_a, b.set_b]),
    toMove: view.to_move === "you" ? "bottom" : view.to_move === "opponent" ? "top" : null,
    score: { top: view.score.opponent, bottom: view.score.you },
    markers: b.markers.map((m) => (m === "you" ? "bottom" : m === "opponent" ? "top" : null)),
    sides: { top: b.their_side, bottom: b.your_side },
    top: { name: view.opponent, short: view.opponent, tokens: b.their_tokens, hand: b.their_hand_size,
      playing: offered !== undefined && !mine ? offered : null,
      secret: shown.opponent, tradeoff: b.their_tokens[1] ? null : "2 cards face down" },
    bottom: { name: "You", short: "you", tokens: b.your_tokens, playing: offered !== undefined && mine ? offered : view.turn && view.turn.token !== null ? view.turn.token : null,
      secret: shown.you, tradeoff: b.tradeoff.length ? names(b.tradeoff) : null },
  };
}

// A view from the server: the opponent's moves since the person's last one are played out one
// at a time at the chosen pace (the round-end screen in its place), then the position is shown
async function present(view) {
  const fresh = !game || game.id !== view.id;
  const before = fresh ? 0 : game.events.length;
  if (fresh) {
    seenScorings = 0;
    drawn = null;
    if (document.activeElement) document.activeElement.blur();  // the keys play now, not the Start button
  }
  game = view;
  show("play");
  const steps = view.steps.filter((st) => st.events > before);
  document.body.dataset.steps = String(steps.length);
  if (pace > 0 && steps.length) {
    setBusy(true, `${view.opponent} is playing…`);
    pending = null;
    pick = null;
    for (const [i, step] of steps.entries()) {
      await roundEnds(step.events);  // a round scored before this move: its screen first
      drawTable(playTable({ ...view, ...step, result: null, to_move: "opponent", your_move: false, turn: null }));
      drawLog(view.events.slice(0, step.events));
      $("prompt").textContent = `${view.opponent} is playing… (move ${i + 1} of ${steps.length})`;
      document.body.dataset.shown = String(Number(document.body.dataset.shown || 0) + 1);  // for tests: a step is on screen
      await new Promise((resolve) => setTimeout(resolve, pace));
    }
    setBusy(false);
  }
  render(view);
}

function roundEnds(upTo) {
  const scorings = game.events.slice(0, upTo).filter((e) => e.kind === "scoring").length;
  if (seenScorings >= scorings) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => { if (seenScorings >= scorings) resolve(); else $("round-end").addEventListener("close", done, { once: true }); };
    $("round-end").addEventListener("close", done, { once: true });
    showRoundEnd();
  });
}

function drawLog(events) {
  $("log").replaceChildren(...events.map((e) => el("li", { class: e.who, text: e.text })));
  // to the end, with the top line whole (not half hidden under the panel's heading)
  const box = $("log-area");
  $("log").style.paddingBottom = "0px";
  const heading = box.querySelector("h2").offsetHeight;
  const end = box.scrollHeight - box.clientHeight;
  const first = [...$("log").children].find((li) => li.offsetTop - heading >= end);
  const top = first ? first.offsetTop - heading : end;
  $("log").style.paddingBottom = `${Math.max(0, top - end)}px`;  // room to scroll that far
  box.scrollTop = top;
}

function render(view) {
  show("play");
  const b = view.board;
  drawTable(playTable(view));

  // the selection: a token and its cards, chosen in any order and sent together; an answer
  // chosen on the cards, sent on Confirm
  const turn = view.turn;
  pending = turn && turn.token !== null ? { token: turn.token, fixed: true, cards: [] } : null;  // a new position
  pick = view.phase === "SPLIT" && b.your_decision ? { split: [] } : null;
  drawHand();
  drawOffer();
  drawControls();
  drawLog(view.events);
  $("finished").hidden = !view.result;
  $("board").dataset.over = view.result ? "1" : "";
  if (view.result) showEnding(view);
  showRoundEnd();
  document.body.dataset.renders = Number(document.body.dataset.renders || 0) + 1;  // for tests: a view is shown
}

// The offer on the table; the person's answer (or split) is built on its cards
function drawOffer() {
  const view = game;
  const b = view.board;
  const area = $("offer-area");
  const mine = b.your_decision && view.your_move;
  area.hidden = !["GIFT_ANSWER", "SPLIT", "COMP_ANSWER"].includes(view.phase);
  $("offer").replaceChildren();
  if (view.phase === "GIFT_ANSWER") {
    $("offer-title").textContent = mine ? `A Gift from ${view.opponent}: take one card` : `Your Gift, waiting for ${view.opponent}`;
    $("offer").replaceChildren(...b.offer.map((g, i) => {
      if (!mine) return card(g);
      const on = pick && pick.index === i;
      const node = card(g, { class: `card${on ? " selected" : ""}`, "aria-pressed": on ? "true" : "false", "data-action": 14 + g,
        title: `take ${label(g)}`, onclick: () => chooseGift(i) });
      node.prepend(el("kbd", { text: String(i + 1) }));
      return node;
    }));
  } else if (view.phase === "SPLIT") {
    $("offer-title").textContent = "Your Competition: put two cards in pair A, the other two are pair B";
    const inA = pick ? pick.split : [];
    const group = (name, members) => el("div", { class: `set group-${name}`, "data-group": name }, [el("strong", { text: name }),
      ...members.map((i) => {
        const node = card(b.offer[i], { "data-index": i, title: name === "A" ? "move it to pair B" : "move it to pair A", onclick: () => toggleSplit(i) });
        node.prepend(el("kbd", { text: String(i + 1) }));
        return node;
      })]);
    const rest = b.offer.map((_, i) => i).filter((i) => !inA.includes(i));
    $("offer").replaceChildren(group("A", inA), group("B", rest));
  } else if (view.phase === "COMP_ANSWER") {
    $("offer-title").textContent = mine ? `A Competition from ${view.opponent}: take pair A or B` : `Your Competition, waiting for ${view.opponent}`;
    const set = (name, cards, action, i) => {
      const parts = [el("strong", { text: name }), ...cards.map((g) => card(g))];
      if (!mine) return el("div", { class: "set" }, parts);
      const on = pick && pick.action === action;
      const node = el("button", { class: `set${on ? " selected" : ""}`, type: "button", "aria-pressed": on ? "true" : "false", "data-action": action,
        title: `take pair ${name}`, onclick: () => choosePair(i) }, parts);
      node.prepend(el("kbd", { text: String(i + 1) }));
      return node;
    };
    $("offer").replaceChildren(set("A", b.set_a, 21, 0), set("B", b.set_b, 22, 1));
  }
}

// An answer chosen on the cards (sent on Confirm): the i-th Gift card, or pair A (0) or B (1)
function chooseGift(i) {
  const g = game.board.offer[i];
  choose({ action: 14 + g, index: i, text: `take ${label(g)}` });
}

function choosePair(i) {
  choose({ action: 21 + i, text: `take pair ${"AB"[i]}: ${names(i ? game.board.set_b : game.board.set_a)}` });
}

function choose(answer) {
  pick = answer;
  drawOffer();
  drawControls();
}

function toggleSplit(i) {
  const inA = pick.split;
  if (inA.includes(i)) inA.splice(inA.indexOf(i), 1);
  else if (inA.length < 2) inA.push(i);
  else return;
  drawOffer();
  drawControls();
}

// The split action whose pairs are the two groups built on the cards (either may be called A)
function splitAction() {
  if (!pick || !pick.split || pick.split.length !== 2) return null;
  const key = (cards) => [...cards].sort((x, y) => x - y).join(",");
  const offer = game.board.offer;
  const a = key(pick.split.map((i) => offer[i]));
  const b = key(offer.filter((_, i) => !pick.split.includes(i)));
  const found = game.choices.find((c) => c.sets && ((key(c.sets[0]) === a && key(c.sets[1]) === b) || (key(c.sets[0]) === b && key(c.sets[1]) === a)));
  return found ? found.action : null;
}

// The end of a game: who won as a headline, the score and why, each round's scoring, what next
function showEnding(view) {
  const r = view.result;
  const headline = { you: "You won", opponent: "You lost", draw: "Draw" }[r.winner];
  $("headline").textContent = headline;
  $("headline").className = `headline ${r.winner}`;
  const why = r.reason.charAt(0).toUpperCase() + r.reason.slice(1);
  $("result").textContent = r.points
    ? `${why}. Charm points ${r.points[0]}-${r.points[1]}, geishas ${r.geishas[0]}-${r.geishas[1]} (you-${view.opponent}).`
    : `${why}.`;
  const rounds = view.events.filter((e) => e.kind === "scoring");
  $("rounds").replaceChildren(
    el("tr", {}, ["round", "you: charm", "geishas", `${view.opponent}: charm`, "geishas"].map((h) => el("th", { text: h }))),
    ...rounds.map((e) => el("tr", {}, [e.round, e.points[0], e.geishas[0], e.points[1], e.geishas[1]].map((x) => el("td", { text: String(x) })))),
  );
  $("download").href = `/api/games/${encodeURIComponent(view.id)}/record`;
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
  let prompt = view.result ? "" : !view.your_move ? `${view.opponent} is thinking…` : prompts[view.phase] || "";
  if (turn && !pending) {
    prompt = turn.tokens.length === 1 ? "Play your last action token" : "Choose an action token";
    $("tokens").replaceChildren(...turn.tokens.map((t, i) => el("button", { class: "choice token-choice", type: "button",
      "data-token": t.token, onclick: () => chooseToken(t.token) }, [el("kbd", { text: String(i + 1) }), ` ${t.name} (${t.cards} card${t.cards > 1 ? "s" : ""})`])));
  } else if (turn && pending) {
    const chosen = pending.cards.map((i) => game.board.hand[i]);
    const left = needed();
    prompt = left ? `${TOKENS[pending.token]}: choose ${plural(left, "more card")} from your hand, in any order` : `${TOKENS[pending.token]}: confirm your cards`;
    $("selection-bar").hidden = false;
    $("selected").textContent = `Selected for ${TOKENS[pending.token]}: ${names(chosen)}`;
    $("confirm").disabled = left !== 0;
    $("cancel").textContent = pending.fixed ? "Clear" : "Cancel";
  } else if (view.your_move && pick && pick.split) {
    const ready = splitAction() !== null;
    prompt = ready ? "Confirm the two pairs, or move a card to change them" : `Tap ${plural(2 - pick.split.length, "more card")} to put in pair A`;
    $("selection-bar").hidden = false;
    $("selected").textContent = `Pair A: ${names(pick.split.map((i) => view.board.offer[i]))}`;
    $("confirm").disabled = !ready;
    $("cancel").textContent = "Clear";
  } else if (view.your_move && pick) {
    prompt = "Confirm, or choose again";
    $("selection-bar").hidden = false;
    $("selected").textContent = `You ${pick.text}`;
    $("confirm").disabled = false;
    $("cancel").textContent = "Cancel";
  }
  $("prompt").textContent = view.result ? "" : `Round ${view.round}: ${prompt}`;
}

function chooseToken(token) {
  pending = { token, fixed: false, cards: [] };
  drawHand();
  drawControls();
}

function cancelSelection() {
  if (pick) {
    pick = pick.split ? { split: [] } : null;
    drawOffer();
    drawControls();
    return;
  }
  if (!pending) return;
  if (pending.fixed) pending.cards = [];
  else pending = null;
  drawHand();
  drawControls();
}

function confirmSelection() {
  if (busy) return;
  if (pick) {
    const action = pick.split ? splitAction() : pick.action;
    if (action !== null) move(action);
    return;
  }
  if (!pending || needed() !== 0) return;
  const body = { cards: pending.cards.map((i) => game.board.hand[i]) };
  if (!pending.fixed) body.token = pending.token;
  send(`/api/games/${encodeURIComponent(game.id)}/turn`, body);
}

function move(action) {
  if (busy) return;
  send(`/api/games/${encodeURIComponent(game.id)}/actions`, { action });
}

// A move on its way: every control waits (disabled, and the keys too) until the answer is shown
function send(path, body) {
  setBusy(true, "Sending your move…");
  run(async () => {
    let view = null;
    try { view = await api("POST", path, body); } finally { setBusy(false); }
    await present(view);
  });
}

function setBusy(on, text) {
  busy = on;
  document.body.dataset.busy = on ? "1" : "";
  document.querySelectorAll("#controls button, #hand button, #offer button").forEach((b) => {
    if (on) { b.dataset.wasDisabled = b.disabled ? "1" : ""; b.disabled = true; } else if (b.dataset.wasDisabled === "") b.disabled = false;
  });
  if (on) $("prompt").textContent = text;
}

// The round-end screen: held until the person moves on, one scoring at a time.
function showRoundEnd() {
  const dialog = $("round-end");
  const scorings = game.events.filter((e) => e.kind === "scoring");
  if (dialog.open || seenScorings >= scorings.length) return;
  const s = scorings[seenScorings];
  const side = (m) => (m === "you" ? 0 : m === "opponent" ? 1 : null);
  const table = scoringTable({ ...s, markers: s.markers.map(side), markers_before: s.markers_before.map(side) }, ["you", game.opponent]);
  $("round-end-title").textContent = s.final ? `Round ${s.round} scored: the game is over` : `Round ${s.round} scored`;
  const body = [table];
  if (s.final && game.result) {
    const r = game.result;
    body.push(el("p", { class: "final", text: `${{ you: "You won", opponent: "You lost", draw: "Draw" }[r.winner]}: ${r.reason}.` }));
  }
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
  players = data.names;
  spoilerFree = watched;
  $("scrub").max = frames.length - 1;
  $("watch-download").hidden = !watched;
  if (watched) $("watch-download").href = URL.createObjectURL(new Blob([data.record], { type: "application/x-ndjson" }));
  const lines = [];
  frames.forEach((f, i) => {
    if (i === 0) return;
    lines.push(el("li", { class: f.seat === 0 ? "bottom" : f.seat === 1 ? "top" : "table", "data-frame": i, text: f.move, onclick: () => { stopTimer(); goTo(i); } }));
    if (f.scoring) {
      const sc = f.scoring;
      const text = `Round ${sc.round} scored: charm points ${sc.points[0]}-${sc.points[1]}, geishas ${sc.geishas[0]}-${sc.geishas[1]} (${players[0]}-${players[1]}).`;
      lines.push(el("li", { class: "table scoring-line", "data-frame": i, text, onclick: () => { stopTimer(); goTo(i); } }));
    }
  });
  $("log").replaceChildren(...lines);
  show("replay");
  goTo(0);
  if (watched) startTimer();
}

function frameTable(f) {
  const side = (m) => (m === 0 ? "bottom" : m === 1 ? "top" : null);
  // the token on the table: the one being chosen for, or the Gift or Competition being answered
  const offered = { SELECT: f.token, GIFT_ANSWER: 2, SPLIT: 3, COMP_ANSWER: 3 }[f.phase];
  const player = offered === undefined || f.to_move === null ? null : ["SELECT", "SPLIT"].includes(f.phase) ? f.to_move : 1 - f.to_move;
  const seat = (s) => ({
    name: players[s], short: players[s], tokens: f.tokens[s], hand: f.hands[s], playing: s === player ? offered : null,
    secret: f.secrets[s] >= 0 ? label(f.secrets[s]) : null, tradeoff: f.tradeoffs[s].length ? names(f.tradeoffs[s]) : null,
  });
  const status = f.result ? "game over" : f.scoring ? "round scored" : `${players[f.to_move]} to move`;
  return {
    round: f.round, status, pile: f.draw_pile.length, toMove: side(f.to_move),
    score: { top: { charm: f.score.points[1], geishas: f.score.geishas[1] }, bottom: { charm: f.score.points[0], geishas: f.score.geishas[0] } },
    markers: f.markers.map(side), sides: { top: f.placed[1], bottom: f.placed[0] }, top: seat(1), bottom: seat(0),
  };
}

function goTo(i) {
  const next = Math.max(0, Math.min(frames.length - 1, i));
  if (Math.abs(next - frame) !== 1) drawn = null;  // a jump: no single move to mark
  frame = next;
  const f = frames[frame];
  drawTable(frameTable(f));
  $("scrub").value = frame;
  $("replay-pos").textContent = `move ${frame} of ${frames.length - 1} · round ${f.round}`;
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
      scoringTable({ ...f.scoring, markers: f.scoring.markers.map(own), markers_before: before.map(own) }, players));
  }
  if (f.result) extra.push(el("p", { class: "final", text: f.result.text }));
  const pile = f.draw_pile.length ? `draw pile, top first: ${names(f.draw_pile)}` : "the draw pile is empty";
  extra.push(el("p", { class: "hidden-cards", text: `Hidden from both players: the removed card ${label(f.removed)} · ${pile}` }));
  $("replay-extra").replaceChildren(...extra);
  document.querySelectorAll("#log li").forEach((li) => {
    li.classList.toggle("current", Number(li.dataset.frame) === frame);
    li.hidden = spoilerFree && Number(li.dataset.frame) > frame;  // a watched game tells no move before it is played
  });
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
    const won = (w === 0 || w === 1) && Array.isArray(r.players) ? `${String(r.players[w]) === "human" ? "you" : String(r.players[w])} won` : w === -1 ? "a draw" : "";
    const how = r.result === null ? "unfinished" : won;
    return `game ${i + 1}: ${who}${how ? `, ${how}` : ""}`.slice(0, 120);
  } catch {
    return `game ${i + 1}: not JSON`;
  }
}

// ----------------------------------------------------------------- wiring ---

function showForm(id) {
  for (const f of ["new-game", "watch-game", "pick-game"]) $(f).hidden = f !== id;
}

$("show-new").addEventListener("click", () => showForm($("new-game").hidden ? "new-game" : null));

$("show-watch").addEventListener("click", () => showForm("watch-game"));
$("show-rules").addEventListener("click", () => $("rules").showModal());
// A new game; one in progress is abandoned only after the person says so
function startGame(settings) {
  const go = () => run(async () => {
    const view = await api("POST", "/api/games", settings);
    lastStart = settings;
    showForm(null);  // the form folds away while the game is played
    await present(view);
  });
  if (!game || game.result) { go(); return; }
  $("abandon").returnValue = "";
  $("abandon").showModal();
  $("abandon").addEventListener("close", () => { if ($("abandon").returnValue === "abandon") go(); }, { once: true });
}

$("new-game").addEventListener("submit", (event) => {
  event.preventDefault();
  const seed = $("seed").value === "" ? null : Number($("seed").value);
  startGame({ opponent: $("opponent").value, seat: Number($("seat").value), seed });
});
$("play-again").addEventListener("click", () => startGame(lastStart || { opponent: game.opponent, seat: game.seat, seed: null }));
$("watch-game").addEventListener("submit", (event) => {
  event.preventDefault();
  const seed = $("watch-seed").value === "" ? null : Number($("watch-seed").value);
  const players = [$("watch-0").value, $("watch-1").value];
  $("watch-start").disabled = true;
  $("watch-status").textContent = `${players[0]} and ${players[1]} are playing the game; it is shown once it is over…`;
  run(async () => {
    try {
      showFrames(await api("POST", "/api/watch", { players, seed }), true);
    } finally {
      $("watch-start").disabled = false;
      $("watch-status").textContent = "";
    }
  });
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
$("pace").addEventListener("change", () => {
  pace = Number($("pace").value);
  try { localStorage.setItem("hanamikoji-pace", String(pace)); } catch { /* storage off: this page only */ }
});
try {
  const saved = localStorage.getItem("hanamikoji-pace");
  if (saved !== null && [...$("pace").options].some((o) => o.value === saved)) { $("pace").value = saved; pace = Number(saved); }
} catch { /* storage off */ }
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
  drawn = null;
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
  if (mode !== "play" || !game || !game.your_move || busy || $("round-end").open) return;
  const n = Number(event.key);
  const offer = game.board.offer;
  if (event.key === "Enter") confirmSelection();
  else if (event.key === "Escape") cancelSelection();
  else if (Number.isInteger(n) && n >= 1) {
    if (game.turn && !pending && n <= game.turn.tokens.length) chooseToken(game.turn.tokens[n - 1].token);
    else if (game.turn && pending && n <= game.board.hand.length) toggle(n - 1);
    else if (game.phase === "SPLIT" && pick && n <= offer.length) toggleSplit(n - 1);
    else if (game.phase === "GIFT_ANSWER" && n <= offer.length) chooseGift(n - 1);
    else if (game.phase === "COMP_ANSWER" && n <= 2) choosePair(n - 1);
    else return;
  } else return;
  event.preventDefault();
});

run(async () => {
  const data = await api("GET", "/api/opponents");
  GEISHAS = data.geishas;
  const options = () => data.opponents.map((o) => el("option", { value: o, text: o }));
  $("opponent").replaceChildren(...options());
  $("watch-0").replaceChildren(...options());
  $("watch-1").replaceChildren(...options());
  $("opponent").value = data.default;
  $("watch-0").value = data.default;
  $("watch-1").value = data.opponents.find((o) => o !== data.default) || data.default;
});
