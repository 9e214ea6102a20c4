// The board drawn from the state: render() draws everything the state says, every time, so it
// can run after any change; it changes nothing but the page.
import { $, card, el, stack, tint } from "./dom.js";
import { bottomSeat, facts, label, names, pairSize, plural, splitChoice, tokenName } from "./words.js";
import { state } from "./state.js";

const STATS = ["charm", "geishas"];  // a round's result for each player, as the results table shows it
const PROMPTS = { SPLIT: "Split the Competition cards into two pairs", GIFT_ANSWER: "Take one Gift card", COMP_ANSWER: "Take a Competition pair" };

export function render() {
  const mode = state.mode;
  $("welcome").hidden = mode !== "welcome";
  $("board").hidden = mode === "welcome";
  $("board").dataset.mode = mode;
  $("board").setAttribute("aria-busy", state.busy ? "true" : "false");
  $("me").hidden = mode !== "play";
  $("controls").hidden = mode !== "play";
  $("nav").hidden = mode !== "replay";
  if (mode === "welcome") return;
  drawTable(state.table, state.marks);
  drawOffer();
  if (mode === "play") {
    drawHand();
    drawControls();
    const upTo = state.position === state.game ? state.game.events.length : state.position.events;
    drawLog(state.game.events.slice(0, upTo).map((e) => ({ who: e.who, text: e.text })), null);
    drawEnding();
  } else drawReplay();
}

// ------------------------------------------------------------ the table ---

function drawTable(t, marks) {
  const marked = (node, on) => { if (on) node.dataset.last = "1"; return node; };
  const pts = (side) => `${t.score[side].charm} charm · ${plural(t.score[side].geishas, "geisha")}`;
  // two lines, each of its own length whatever the status says, so the table never moves
  $("scoreboard").replaceChildren(
    el("div", { class: "line" }, [
      el("span", { class: "round", text: `Round ${t.round}` }),
      el("span", { class: "turn", text: t.status }),
      t.practice ? el("span", { class: "practice", title: "the seed was chosen, so the deal was known: a practice game", text: "practice" }) : "",
    ]),
    el("div", { class: "line" }, [
      el("span", { class: "score top", text: `${t.top.name}: ${pts("top")}` }),
      el("span", { class: "score bottom", text: `${t.bottom.name}: ${pts("bottom")}` }),
      el("span", { class: "pile", title: "the draw pile", text: t.pile ? `pile: ${plural(t.pile, "card")}` : "pile: empty" }),
    ]),
  );
  for (const side of ["top", "bottom"]) {
    const p = t[side];
    const how = (i) => (p.playing === i ? "playing" : p.tokens[i] ? "left" : "spent");
    const title = { left: "not played yet", spent: "played", playing: "being played now" };
    const tokens = el("span", { class: "tokens" }, facts.tokens.map((tk, i) =>
      marked(el("span", { class: `token ${how(i)}`, "data-token": i, title: `${tk.name}: ${title[how(i)]}`, text: tk.name }), marks && marks.tokens[side].includes(i))));
    const parts = [el("strong", { text: p.name }), tokens];
    if (typeof p.hand === "number") parts.push(el("span", { text: `${plural(p.hand, "card")} in hand` }));
    else if (side === "top" || state.mode === "replay") parts.push(el("span", { class: "hand-cards", title: `hand: ${names(p.hand)}` }, p.hand.map((g) => card(g, { class: "card small" }))));
    parts.push(el("span", { class: "slot", text: `Secret: ${p.secret || "-"}` }));
    parts.push(el("span", { class: "slot", text: `Trade-off: ${p.tradeoff || "-"}` }));
    $(`${side}-player`).replaceChildren(...parts);
    $(`${side}-player`).classList.toggle("to-move", t.toMove === side);
  }
  $("geishas").replaceChildren(...facts.geishas.map((gs, g) => {
    const m = t.markers[g];
    const pill = el("span", { class: `pill ${m || "none"}`, title: m ? `favour: ${t[m].name}` : "favour: nobody yet" },
      [m === "top" ? "▲" : m === "bottom" ? "▼" : "●", el("span", { class: "label", text: ` ${m ? t[m].name : "neutral"}` })]);
    const tile = marked(tint(el("div", { class: `tile ${m || "none"}` }, [
      el("span", { class: "name", text: gs.name }), el("span", { class: "charm", text: `charm ${gs.charm}` }), pill,
    ]), g), marks && marks.tiles.includes(g));
    const side = (who) => marked(stack(t.sides[who][g], who, g, marks ? marks.added[who][g] : 0), marks && marks[who].includes(g));
    return el("div", { class: "geisha", "data-geisha": g }, [side("top"), tile, side("bottom")]);
  }));
  $("offer-area").toggleAttribute("data-last", Boolean(marks && marks.offer));
  $("offer-area").dataset.from = t.offer ? t.offer.side : "";
  // moves are seen happening: cards slide in from the hand that played them, or from the offer
  // just taken; not at the "at once" pace (nor under reduced motion: the stylesheet)
  $("geishas").classList.toggle("from-offer", Boolean(marks && marks.fromOffer));
  $("board").toggleAttribute("data-instant", state.pace === 0);
  document.querySelectorAll(".top-name").forEach((n) => { n.textContent = t.top.name; });
  document.querySelectorAll(".bottom-name").forEach((n) => { n.textContent = t.bottom.name; });
}

// The scored round: each geisha's cards on both sides (Secrets included), the markers before
// and after, the revealed Secrets and the totals.  s: {secrets, placed, markers_before, markers,
// points, geishas}, sides by index 0 and 1 named sideNames.
export function scoringTable(s, sideNames) {
  const owner = (m) => (m === null ? "neutral" : sideNames[m]);
  const rows = facts.geishas.map((_, g) => {
    const moved = s.markers_before[g] !== s.markers[g];
    return el("tr", { class: moved ? "moved" : null }, [
      el("th", { class: "geisha-name" }, [tint(el("span", { class: "swatch" }), g), label(g)]),
      el("td", { text: String(s.placed[0][g]) }), el("td", { text: String(s.placed[1][g]) }),
      el("td", { text: moved && s.markers_before[g] !== null ? `${owner(s.markers_before[g])} → ${owner(s.markers[g])}` : moved ? `→ ${owner(s.markers[g])}` : owner(s.markers[g]) }),
    ]);
  });
  const total = (i) => `${sideNames[i]} ${s.points[i]} charm points, ${plural(s.geishas[i], "geisha")}`;
  return el("div", { class: "scoring" }, [
    el("p", { text: `Secrets revealed: ${sideNames[0]} ${label(s.secrets[0])}, ${sideNames[1]} ${label(s.secrets[1])}.` }),
    el("table", {}, [
      el("tr", {}, [el("th", { text: "geisha" }), el("th", { text: sideNames[0] }), el("th", { text: sideNames[1] }), el("th", { text: "favour" })]),
      ...rows,
    ]),
    el("p", { class: "totals", text: `Totals: ${total(0)}; ${total(1)}.` }),
  ]);
}

// ------------------------------------------------------------ the dock ---

// Is it the person's decision on the position shown (not while the opponent's moves play out)
const deciding = () => state.mode === "play" && state.position === state.game && state.game.your_move && !state.busy;

// The offer on the table while it is open: the Gift's cards, the Competition's cards or pairs;
// the person's answer (or split) is built on its cards
function drawOffer() {
  const offer = state.table.offer;
  const area = $("offer-area");
  area.hidden = !offer;
  if (!offer) { $("offer").replaceChildren(); return; }
  const who = state.table[offer.side].name;
  const whose = /^you$/i.test(who) ? "Your" : `${who}'s`;  // a replay names the person "you"
  const theirs = state.mode === "play" ? offer.side === "top" : true;
  const mine = deciding() && theirs;  // an answer to make
  if (offer.kind === "gift") {
    $("offer-title").textContent = mine ? `A Gift from ${who}: take one card` : state.mode === "play" && !theirs ? `Your Gift, waiting for ${state.table.top.name}` : `${whose} Gift`;
    $("offer").replaceChildren(...offer.cards.map((g, i) => {
      if (!mine) return card(g);
      const on = state.pick && state.pick.index === i;
      const node = card(g, { class: `card${on ? " selected" : ""}`, "aria-pressed": on ? "true" : "false", title: `take ${label(g)}`, onclick: () => act("gift", i) });
      node.prepend(el("kbd", { text: String(i + 1) }));
      if (on) node.append(el("span", { class: "tick", "aria-hidden": "true", text: "✓" }));
      return node;
    }));
  } else if (!offer.pairs && state.mode === "play" && !theirs) {  // the person's split: built, or being sent
    const building = deciding();
    $("offer-title").textContent = building ? "Your Competition: split it into pairs A and B" : "Your Competition, being split into pairs";
    const inA = state.pick && state.pick.split ? state.pick.split : [];
    const group = (name, members) => el("div", { class: `set group-${name}`, "data-group": name }, [el("strong", { text: name }),
      ...members.map((i) => {
        if (!building) return card(offer.cards[i]);
        const node = card(offer.cards[i], { "data-index": i, title: name === "A" ? "move it to pair B" : "move it to pair A", onclick: () => act("split", i) });
        node.prepend(el("kbd", { text: String(i + 1) }));
        return node;
      })]);
    $("offer").replaceChildren(group("A", inA), group("B", offer.cards.map((_, i) => i).filter((i) => !inA.includes(i))));
  } else if (!offer.pairs) {
    $("offer-title").textContent = `${whose} Competition, being split into pairs`;
    $("offer").replaceChildren(...offer.cards.map((g) => card(g)));
  } else {
    $("offer-title").textContent = mine ? `A Competition from ${who}: take pair A or B` : state.mode === "play" && !theirs ? `Your Competition, waiting for ${state.table.top.name}` : `${whose} Competition pairs`;
    $("offer").replaceChildren(...offer.pairs.map((cards, i) => {
      const parts = [el("strong", { text: "AB"[i] }), ...cards.map((g) => card(g))];
      if (!mine) return el("div", { class: "set" }, parts);
      const on = state.pick && state.pick.index === i;
      const node = el("button", { class: `set${on ? " selected" : ""}`, type: "button", "aria-pressed": on ? "true" : "false",
        title: `take pair ${"AB"[i]}`, onclick: () => act("pair", i) }, parts);
      node.prepend(el("kbd", { text: String(i + 1) }));
      return node;
    }));
  }
}

// What a click on the dock does: main.js registers it (the board only draws)
const handlers = {};
export function on(name, fn) { handlers[name] = fn; }
const act = (name, ...args) => handlers[name](...args);

export function needed() {
  const p = state.pending;
  if (!p) return 0;
  return (p.fixed ? state.game.turn.needed : facts.tokens[p.token].cards) - p.cards.length;
}

function drawHand() {
  const hand = state.table.bottom.hand;
  const selecting = deciding() && state.pending !== null;
  const chosen = new Set(selecting ? state.pending.cards : []);  // hand index i: the i-th card in hand order
  const drawn = state.marks ? state.marks.drawn : [];
  $("hand").replaceChildren(...hand.map((g, i) => {
    const fresh = drawn.includes(i) ? { "data-last": "1", title: `${label(g)}: just drawn` } : {};
    if (!selecting) return card(g, fresh);
    const on = chosen.has(i);
    const node = card(g, { class: `card${on ? " selected" : ""}`, "aria-pressed": on ? "true" : "false", "data-index": i,
      title: on ? "selected: click to put it back" : "click to select", onclick: () => act("card", i), disabled: !on && needed() === 0 ? true : null, ...fresh });
    if (String(i + 1).length === 1) node.prepend(el("kbd", { text: String(i + 1) }));  // a number key plays it
    if (on) node.append(el("span", { class: "tick", "aria-hidden": "true", text: "✓" }));
    return node;
  }));
  $("hand").classList.toggle("selecting", selecting);
}

function drawControls() {
  const view = state.game;
  const turn = view.turn;
  const bar = (text, ready, cancel) => {
    $("selection-bar").hidden = false;
    $("selected").textContent = text;
    $("confirm").disabled = !ready || state.busy;
    $("cancel").textContent = cancel;
  };
  $("tokens").replaceChildren();
  $("selection-bar").hidden = true;
  $("next-move").hidden = !(state.busy && state.step && state.pace < 0);
  let prompt;
  const who = state.step && state.step.by === "you" ? "your move ends the round" : `${view.opponent} is playing`;
  if (state.busy) prompt = state.step ? `${who}… (move ${state.step.index + 1} of ${state.step.count})` : state.busyText;
  else if (view.result) prompt = "";
  else if (!view.your_move) prompt = `${view.opponent} is thinking…`;
  else if (turn && !state.pending) {
    prompt = turn.tokens.length === 1 ? "Play your last action token" : "Choose an action token";
    $("tokens").replaceChildren(...turn.tokens.map((t, i) => el("button", { class: "choice token-choice", type: "button",
      "data-token": t.token, onclick: () => act("token", t.token) }, [el("kbd", { text: String(i + 1) }), ` ${t.name} (${plural(t.cards, "card")})`])));
  } else if (turn) {
    const left = needed();
    prompt = left ? `${tokenName(state.pending.token)}: choose ${plural(left, "more card")} from your hand, in any order` : `${tokenName(state.pending.token)}: confirm your cards`;
    bar(`Selected for ${tokenName(state.pending.token)}: ${names(state.pending.cards.map((i) => view.board.hand[i]))}`, left === 0, state.pending.fixed ? "Clear" : "Cancel");
  } else if (state.pick && state.pick.split) {
    const ready = splitChoice(view.choices, view.board.offer, state.pick.split) !== null;
    const more = pairSize(view.choices) - state.pick.split.length;
    prompt = ready ? "Confirm the pairs, or move a card" : `Choose ${plural(more, "more card")} for pair A`;
    bar(`Pair A: ${names(state.pick.split.map((i) => view.board.offer[i]))}`, ready, "Clear");
  } else if (state.pick) {
    prompt = "Confirm, or choose again";
    bar(`You ${state.pick.choice.label}`, true, "Cancel");
  } else prompt = PROMPTS[view.phase] || "";
  $("prompt").textContent = prompt && !state.busy ? `Round ${view.round}: ${prompt}` : prompt;
  for (const id of ["cancel", "play-again", "replay-this"]) $(id).disabled = state.busy;
  document.querySelectorAll("#tokens button, #hand button, #offer button").forEach((b) => { if (state.busy) b.disabled = true; });
}

// The log: one line a move; in a replay each line goes to its position
export function drawLog(lines, current) {
  $("log").replaceChildren(...lines.map((line) => el("li", { class: line.who, "data-frame": line.frame, text: line.text, onclick: line.onclick })));
  if (current !== null) {
    const li = $("log").querySelector(`li[data-frame="${current}"]`);
    document.querySelectorAll("#log li.current").forEach((n) => n.classList.remove("current"));
    if (li) { li.classList.add("current"); li.scrollIntoView({ block: "nearest" }); }
    return;
  }
  // to the end, with the top line whole (not half hidden under the panel's heading)
  const box = $("log-area");
  $("log").style.paddingBottom = "0px";
  const heading = box.querySelector("h2").offsetHeight;
  const end = box.scrollHeight - box.clientHeight;
  const first = [...$("log").children].find((li) => li.offsetTop - heading >= end);
  const top = first ? first.offsetTop - heading : end;
  $("log").style.paddingBottom = `${Math.max(0, top - end)}px`;
  box.scrollTop = top;
}

// The end of a game: who won as a headline, the score and why, each round's scoring, what next
function drawEnding() {
  const view = state.game;
  const over = Boolean(view.result) && state.position === view;
  $("finished").hidden = !over;
  $("board").dataset.over = over ? "1" : "";
  if (!over) return;
  const r = view.result;
  $("headline").textContent = { you: "You won", opponent: "You lost", draw: "Draw" }[r.winner];
  $("headline").className = `headline ${r.winner}`;
  $("result").textContent = r.text;
  const rounds = view.events.filter((e) => e.kind === "scoring");
  $("rounds").replaceChildren(
    // each player's name over its columns: a whole name never breaks
    el("tr", {}, [el("th"), ...["You", view.opponent].map((name) => el("th", { colspan: STATS.length, text: name }))]),
    el("tr", {}, ["round", ...STATS, ...STATS].map((h) => el("th", { text: h }))),
    ...rounds.map((e) => el("tr", {}, [e.round, e.points[0], e.geishas[0], e.points[1], e.geishas[1]].map((x) => el("td", { text: String(x) })))),
  );
  $("download").href = `/api/games/${encodeURIComponent(view.id)}/record`;
}

// The round-end screen for the next scoring not shown yet, up to event `upTo` (false: none)
export function openRoundEnd(upTo) {
  const dialog = $("round-end");
  const scorings = state.game.events.slice(0, upTo).filter((e) => e.kind === "scoring");
  if (dialog.open || state.seenScorings >= scorings.length) return false;
  const s = scorings[state.seenScorings];
  const side = (m) => (m === "you" ? 0 : m === "opponent" ? 1 : null);
  const table = scoringTable({ ...s, markers: s.markers.map(side), markers_before: s.markers_before.map(side) }, ["you", state.game.opponent]);
  $("round-end-title").textContent = s.final ? `Round ${s.round} scored: the game is over` : `Round ${s.round} scored`;
  const body = [table];
  const r = state.game.result;
  if (s.final && r) body.push(el("p", { class: "final", text: `${{ you: "You won", opponent: "You lost", draw: "Draw" }[r.winner]}: ${r.reason}.` }));
  $("round-end-body").replaceChildren(...body);
  dialog.returnValue = "";
  dialog.showModal();
  return true;
}

// ------------------------------------------------------------ replays ---

function drawReplay() {
  const { frames, frame, watched, seenEnd } = state.replay;
  const f = frames[frame];
  const known = !watched || seenEnd;  // a watched game does not tell its length before its end
  $("watch-download").hidden = !(watched && seenEnd);  // nor its result, which the record holds
  $("scrub").hidden = !known;
  $("last").hidden = !known;
  $("scrub").max = String(frames.length - 1);
  $("scrub").value = String(frame);
  $("replay-pos").textContent = known ? `move ${frame} of ${frames.length - 1} · round ${f.round}` : `move ${frame} · round ${f.round}`;
  $("play-pause").textContent = state.replay.timer === null ? "▶ play" : "❚❚ pause";
  $("play-pause").disabled = state.pace < 0;
  $("play-pause").title = state.pace < 0 ? "the moves are shown by hand: step with → or forward" : "";
  const extra = [el("p", { id: "replay-move", text: f.move })];
  if (f.scoring) {
    const previous = frames.slice(0, frame).reverse().find((x) => x.scoring && x.round < f.round);
    const before = previous ? previous.scoring.markers : f.scoring.markers.map(() => -1);
    const own = (m) => (m < 0 ? null : m);
    extra.push(scoringTable({ ...f.scoring, markers: f.scoring.markers.map(own), markers_before: before.map(own) }, state.replay.players));
  }
  if (f.result) extra.push(el("p", { class: "final", text: f.result.text }));
  const pile = f.draw_pile.length ? `the draw pile, ${plural(f.draw_pile.length, "card")} (in no order):` : "the draw pile is empty";
  extra.push(el("p", { class: "hidden-cards" }, [`Hidden from both players: the removed card ${label(f.removed)} · ${pile}`,
    ...f.draw_pile.map((g) => card(g, { class: "card small" }))]));
  $("replay-extra").replaceChildren(...extra);
  const me = bottomSeat(state.replay.players);
  const lines = frames.map((x, i) => ({ who: x.seat === me ? "bottom" : x.seat === 1 - me ? "top" : x.scoring ? "table scoring-line" : "table", frame: i, text: x.move, onclick: () => act("goto", i) }))
    .slice(1, known ? frames.length : frame + 1);  // a watched game tells no move before it is played
  drawLog(lines, frame);
}
