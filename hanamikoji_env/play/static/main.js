// The Hanamikoji board: plays, watches and replays through the server's JSON API
// (hanamikoji_env/play/server.py).  The flows change the state (state.js) and call render()
// (board.js); what a move is comes from the server's decoded choices (words.js).
import { $, el } from "./dom.js";
import { needed, on, openRoundEnd, render } from "./board.js";
import { state } from "./state.js";
import { changes, drawnAt, frameTable, giftChoice, pairChoice, pairSize, playTable, setFacts, splitChoice } from "./words.js";

const MAX_RECORD_FILE = 64 * 1024 * 1024;  // a record file read in the browser (a game is a few KB)
const REPLAY_FASTEST = 150;  // ms a position when a replay plays "at once"

async function api(method, path, body, raw = false) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.body = raw ? body : JSON.stringify(body);
    options.headers["Content-Type"] = "application/json";  // the server takes JSON only
  }
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail || response.statusText));
  return data;
}

function showError(error) {
  $("error").textContent = error ? String(error.message || error) : "";
  $("error").hidden = !error;
}

async function run(action) {
  try { showError(null); await action(); } catch (e) { showError(e); }
}

// A new position on the table: its table, and what it changed from the last one (`jump`: no
// single move led here, nothing to mark)
function place(position, table, jump = false, drawn = []) {
  const m = jump || !state.table ? null : changes(state.table, table);
  // an unchanged table keeps the last move's marks, but never a past round's
  if (!m || m.any || drawn.length || state.table.round !== table.round) state.marks = m;
  if (state.marks) state.marks.drawn = drawnAt(table.bottom.hand, drawn);
  state.position = position;
  state.table = table;
}

// A position of the person's game: its table, marked with what changed and the cards the
// person drew since the position before (told by the log)
let told = 0;  // the events told by the position on the table
function placePlay(view, position) {
  const upTo = position === view ? view.events.length : position.events;
  const drawn = view.events.slice(told, upTo).filter((e) => e.kind === "draw" && e.who === "you").flatMap((e) => e.cards);
  told = upTo;
  place(position, playTable(view, position, status(view, position)), false, drawn);
}

// ------------------------------------------------------------------ play ---

const status = (view, position) =>
  position !== view ? `${view.opponent} is playing` : view.result ? "game over" : view.your_move ? "your move" : `${view.opponent} is thinking`;

// A view from the server: the positions before it (the opponent's moves since the person's last
// one, and a round's last move before its scoring) are played out one at a time at the chosen
// pace, each round-end screen in its place, then the view is shown
async function present(view) {
  const fresh = !state.game || state.game.id !== view.id;
  const before = fresh ? 0 : state.game.events.length;
  if (fresh) {
    state.seenScorings = 0;
    state.table = null;
    told = 0;
    if (document.activeElement) document.activeElement.blur();  // the keys play now, not the Start button
  }
  state.game = view;
  state.mode = "play";
  state.pending = null;
  state.pick = null;
  const steps = view.steps.filter((st) => st.events > before);
  state.busy = steps.length > 0;
  for (const [index, step] of steps.entries()) {
    await roundEnds(step.events);  // a round scored before this position: its screen first
    state.step = { index, count: steps.length, by: step.by };
    placePlay(view, step);
    render();
    await wait();
  }
  state.step = null;
  await roundEnds(view.events.length);
  state.busy = false;
  placePlay(view, view);
  const turn = view.turn;
  state.pending = turn && turn.token !== null ? { token: turn.token, fixed: true, cards: [] } : null;
  state.pick = view.phase === "SPLIT" && view.your_move ? { split: [] } : null;
  render();
}

let advance = null;  // the person's "next move" while the moves are shown by hand
function wait() {
  if (state.pace < 0) return new Promise((resolve) => { advance = resolve; });
  return state.pace > 0 ? new Promise((resolve) => setTimeout(resolve, state.pace)) : Promise.resolve();
}

function nextMove() {
  if (advance) { const go = advance; advance = null; $("next-move").hidden = true; go(); }
}

function roundEnds(upTo) {
  return new Promise((resolve) => {
    const next = () => {
      const peeked = $("round-end").returnValue === "peek";  // put aside: Back shows it again
      if (peeked || openRoundEnd(upTo)) $("round-end").addEventListener("close", next, { once: true });
      else resolve();
    };
    next();
  });
}

// The round-end screen put aside to look at the table it scored, then shown again
function backToScoring() {
  $("back-to-scoring").hidden = true;
  $("round-end").returnValue = "";
  $("round-end").showModal();
}

$("round-end").addEventListener("close", () => {
  if ($("round-end").returnValue === "peek") $("back-to-scoring").hidden = false;
  else state.seenScorings += 1;
});
$("back-to-scoring").addEventListener("click", backToScoring);

const board = () => state.game.board;
const answering = () => state.mode === "play" && state.position === state.game && state.game.your_move && !state.busy;

// The person's choices on the cards (or by number keys), sent on Confirm
function chooseToken(token) { state.pending = { token, fixed: false, cards: [] }; }
function toggleCard(i) {
  const p = state.pending;
  const at = p.cards.indexOf(i);
  if (at >= 0) p.cards.splice(at, 1);
  else if (needed() > 0) p.cards.push(i);
}
function toggleSplit(i) {
  const inA = state.pick.split;
  if (inA.includes(i)) inA.splice(inA.indexOf(i), 1);
  else if (inA.length < pairSize(state.game.choices)) inA.push(i);
}
function chooseGift(i) { const c = giftChoice(state.game.choices, board().offer[i]); if (c) state.pick = { choice: c, index: i }; }
function choosePair(i) { const c = pairChoice(state.game.choices, i); if (c) state.pick = { choice: c, index: i }; }
const redrawn = (fn) => (...args) => { fn(...args); render(); };

on("token", redrawn(chooseToken));
on("card", redrawn(toggleCard));
on("gift", redrawn(chooseGift));
on("pair", redrawn(choosePair));
on("split", redrawn(toggleSplit));
on("goto", (i) => { stopTimer(); goTo(i); });

function cancelSelection() {
  if (state.pick) state.pick = state.pick.split ? { split: [] } : null;
  else if (state.pending) state.pending = state.pending.fixed ? { ...state.pending, cards: [] } : null;
  render();
}

function confirmSelection() {
  if (!answering()) return;
  const { pick, pending, game } = state;
  if (pick) {
    const choice = pick.split ? splitChoice(game.choices, game.board.offer, pick.split) : pick.choice;
    const body = { action: choice && choice.action };
    if (pick.split) body.pair_a = pick.split.map((i) => game.board.offer[i]);  // the log keeps the person's names
    if (choice) send(`/api/games/${encodeURIComponent(game.id)}/actions`, body);
    return;
  }
  if (!pending || needed() !== 0) return;
  const body = { cards: pending.cards.map((i) => game.board.hand[i]) };
  if (!pending.fixed) body.token = pending.token;
  send(`/api/games/${encodeURIComponent(game.id)}/turn`, body);
}

// A move on its way: every control waits until the answer is shown
function send(path, body) {
  state.busy = true;
  state.busyText = "Sending your move…";
  render();
  run(async () => {
    let view;
    try {
      view = await api("POST", path, body);
    } catch (error) {  // refused or lost: the controls come back, the selection kept
      state.busy = false;
      render();
      throw error;
    }
    state.busy = false;
    await present(view);
  });
}

// A new game; one in progress is abandoned only after the person says so
function startGame(settings) {
  const go = () => run(async () => {
    if (state.game && !state.game.result) {  // left first: its slot is free, its record kept
      await api("DELETE", `/api/games/${encodeURIComponent(state.game.id)}`).catch(() => {});  // gone already
    }
    const view = await api("POST", "/api/games", settings);
    state.lastStart = settings;
    showForm(null);  // the form folds away while the game is played
    await present(view);
  });
  if (!state.game || state.game.result) { go(); return; }
  $("abandon").returnValue = "";
  $("abandon").showModal();
  $("abandon").addEventListener("close", () => { if ($("abandon").returnValue === "abandon") go(); }, { once: true });
}

// ------------------------------------------------------------ replay and watch ---

function showFrames(data, watched = false) {
  stopTimer();
  Object.assign(state.replay, { frames: data.frames, frame: 0, players: data.names, watched, seenEnd: false });
  if (watched) $("watch-download").href = URL.createObjectURL(new Blob([data.record], { type: "application/x-ndjson" }));
  state.mode = "replay";
  state.table = null;
  goTo(0);
  if (watched) startTimer();
}

function goTo(i) {
  const r = state.replay;
  const next = Math.max(0, Math.min(r.frames.length - 1, i));
  const jump = Math.abs(next - r.frame) !== 1;
  r.frame = next;
  if (next === r.frames.length - 1) { r.seenEnd = true; stopTimer(); }
  place(r.frames[next], frameTable(r.frames[next], r.players), jump);
  render();
}

function startTimer() {
  stopTimer();
  if (state.pace < 0) return;
  const r = state.replay;
  if (r.frame >= r.frames.length - 1) goTo(0);
  r.timer = setInterval(() => goTo(r.frame + 1), state.pace > 0 ? state.pace : REPLAY_FASTEST);
  render();
}

function stopTimer() {
  if (state.replay.timer !== null) clearInterval(state.replay.timer);
  state.replay.timer = null;
}

async function replayLine(line) {
  showFrames(await api("POST", "/api/replay", line, true));  // a record line is a JSON object
}

async function openFile(file) {
  if (file.size > MAX_RECORD_FILE) throw new Error(`a record file here is at most ${MAX_RECORD_FILE / 1048576} MB, this one is ${(file.size / 1048576).toFixed(1)} MB`);
  state.fileLines = (await file.text()).split("\n").filter((line) => line.trim());
  if (state.fileLines.length === 0) throw new Error("the file holds no game record");
  if (state.fileLines.length === 1) { $("pick-game").hidden = true; return replayLine(state.fileLines[0]); }
  $("pick-count").textContent = String(state.fileLines.length);
  $("pick").replaceChildren(...state.fileLines.map((line, i) => el("option", { value: i, text: describeLine(line, i) })));
  showForm("pick-game");
  return replayLine(state.fileLines[0]);
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
$("new-game").addEventListener("submit", (event) => {
  event.preventDefault();
  const seed = $("seed").value === "" ? null : Number($("seed").value);
  startGame({ opponent: $("opponent").value, seat: Number($("seat").value), seed });
});
$("play-again").addEventListener("click", () => startGame(state.lastStart || { opponent: state.game.opponent, seat: state.game.seat, seed: null }));
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
  run(() => replayLine(state.fileLines[Number($("pick").value)]));
});
$("replay-this").addEventListener("click", () => run(async () => {
  const response = await fetch(`/api/games/${encodeURIComponent(state.game.id)}/record`);
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
$("next-move").addEventListener("click", nextMove);
$("log-toggle").addEventListener("click", () => {
  const open = $("log-area").classList.toggle("open");
  $("log-toggle").setAttribute("aria-expanded", String(open));
  $("log-toggle").textContent = open ? "hide" : "show";
});
$("pace").addEventListener("change", () => {
  state.pace = Number($("pace").value);
  try { localStorage.setItem("hanamikoji-pace", String(state.pace)); } catch { /* storage off: this page only */ }
  if (state.pace >= 0) nextMove();
  if (state.mode === "replay") { if (state.replay.timer !== null || state.pace < 0) startTimer(); render(); }
});
try {
  const saved = localStorage.getItem("hanamikoji-pace");
  if (saved !== null && [...$("pace").options].some((o) => o.value === saved)) { $("pace").value = saved; state.pace = Number(saved); }
} catch { /* storage off */ }
$("first").addEventListener("click", () => goTo(0));
$("prev").addEventListener("click", () => goTo(state.replay.frame - 1));
$("next").addEventListener("click", () => goTo(state.replay.frame + 1));
$("last").addEventListener("click", () => goTo(state.replay.frames.length - 1));
$("play-pause").addEventListener("click", () => { if (state.replay.timer === null) startTimer(); else { stopTimer(); render(); } });
$("scrub").addEventListener("input", () => goTo(Number($("scrub").value)));
$("close-replay").addEventListener("click", () => {
  stopTimer();
  $("pick-game").hidden = true;
  state.table = null;
  if (state.game) { state.mode = "play"; place(state.game, playTable(state.game, state.game, status(state.game, state.game)), true); } else state.mode = "welcome";
  render();
});

document.addEventListener("keydown", (event) => {
  const target = event.target;
  if (target.closest && target.closest("input, select, textarea, dialog")) return;  // the slider moves itself
  if (event.key === "Enter" && target.closest && target.closest("button, a")) return;  // its own click
  if (event.key === "?") { $("rules").showModal(); return; }
  if (state.mode === "replay") {
    if (event.key === "ArrowRight") goTo(state.replay.frame + 1);
    else if (event.key === "ArrowLeft") goTo(state.replay.frame - 1);
    else return;
    event.preventDefault();
    return;
  }
  if (!$("back-to-scoring").hidden && (event.key === "Enter" || event.key === "Escape")) { backToScoring(); event.preventDefault(); return; }
  if (state.mode === "play" && advance && (event.key === "ArrowRight" || event.key === " ")) { nextMove(); event.preventDefault(); return; }
  if (!answering() || $("round-end").open) return;
  const n = Number(event.key);
  const { game, pending, pick } = state;
  const offer = game.board.offer;
  if (event.key === "Enter") confirmSelection();
  else if (event.key === "Escape") cancelSelection();
  else if (Number.isInteger(n) && n >= 1) {
    if (game.turn && !pending && n <= game.turn.tokens.length) chooseToken(game.turn.tokens[n - 1].token);
    else if (game.turn && pending && n <= game.board.hand.length) toggleCard(n - 1);
    else if (game.phase === "SPLIT" && pick && n <= offer.length) toggleSplit(n - 1);
    else if (game.phase === "GIFT_ANSWER" && n <= offer.length) chooseGift(n - 1);
    else if (game.phase === "COMP_ANSWER" && pairChoice(game.choices, n - 1)) choosePair(n - 1);
    else return;
    render();
  } else return;
  event.preventDefault();
});

run(async () => {
  const data = await api("GET", "/api/opponents");
  setFacts(data.geishas, data.tokens);
  const options = () => data.opponents.map((o) => el("option", { value: o, text: o }));
  $("opponent").replaceChildren(...options());
  $("watch-0").replaceChildren(...options());
  $("watch-1").replaceChildren(...options());
  $("opponent").value = data.default;
  $("watch-0").value = data.default;
  $("watch-1").value = data.opponents.find((o) => o !== data.default) || data.default;
});
