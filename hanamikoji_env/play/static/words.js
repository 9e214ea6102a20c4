// Pure helpers of the board: no DOM, no fetch, no state of their own, so they are tested alone
// (tests/test_browser.py imports this module in the page).  Everything about the game comes
// from the server: the geishas and tokens (GET /api/opponents) and each view's decoded choices.

// The game's facts as the server sent them; placeholders until it has
export const facts = {
  geishas: [],  // [{name, charm, colour}], by geisha
  tokens: [],   // [{name, cards}], by token
};

export function setFacts(geishas, tokens) {
  facts.geishas = geishas;
  facts.tokens = tokens;
}

export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
export const label = (g) => `${facts.geishas[g].name} ${facts.geishas[g].charm}`;
export const names = (cards) => cards.map(label).join(", ") || "-";
export const tokenName = (t) => facts.tokens[t].name;

const same = (a, b) => [...a].sort((x, y) => x - y).join() === [...b].sort((x, y) => x - y).join();

// ------------------------------------------------------------ choices ---
// Each legal move as the server decoded it: {action, label, kind, cards, token|sets|pair}.
// The page finds the one the person built on the cards; it never computes an id.

export function giftChoice(choices, g) {
  return choices.find((c) => c.kind === "gift-take" && c.cards[0] === g) || null;
}

export function pairChoice(choices, pair) {
  return choices.find((c) => c.kind === "comp-take" && c.pair === pair) || null;
}

// How many cards make a pair of the Competition being split (0: no split to make)
export function pairSize(choices) {
  const split = choices.find((c) => c.kind === "split");
  return split ? split.sets[0].length : 0;
}

// The split whose two pairs are the cards the person put in pair A and the rest (either may be
// the server's first pair)
export function splitChoice(choices, offer, inA) {
  if (inA.length !== pairSize(choices)) return null;
  const a = inA.map((i) => offer[i]);
  const b = offer.filter((_, i) => !inA.includes(i));
  return choices.find((c) => c.kind === "split" && ((same(c.sets[0], a) && same(c.sets[1], b)) || (same(c.sets[0], b) && same(c.sets[1], a)))) || null;
}

// ------------------------------------------------------------ tables ---
// A table is what the board draws: {round, status, pile, practice, toMove, score, markers,
// sides, top, bottom, offer}; sides are "top" (the opponent, or seat 1) and "bottom".

const SIDE = { you: "bottom", opponent: "top" };

// The table of a position of a person's game: the view itself, or one step of the opponent's
// moves played out (the step's board and score over the view's names)
export function playTable(view, position, status) {
  const b = position.board;
  const playing = b.playing ? { ...b.playing, side: SIDE[b.playing.by] } : null;
  const over = position.phase === "ROUND_OVER" || position.phase === "GAME_OVER";
  const revealed = view.result && view.last_round && position === view ? view.last_round.secrets : null;
  return {
    round: position.round, status, pile: b.draw_pile_size, practice: view.practice,
    toMove: over ? null : b.your_decision ? "bottom" : "top",
    score: { top: position.score.opponent, bottom: position.score.you },
    markers: b.markers.map((m) => SIDE[m] || null),
    sides: { top: b.their_side, bottom: b.your_side },
    offer: playing && playing.offer ? { kind: playing.offer, side: playing.side, cards: b.offer, pairs: b.set_a.length ? [b.set_a, b.set_b] : null } : null,
    top: {
      name: view.opponent, tokens: b.their_tokens, hand: b.their_hand_size, playing: playing && playing.side === "top" ? playing.token : null,
      secret: revealed ? `${label(revealed[1])} (revealed)` : b.their_face_down.secret ? "face down" : null,
      tradeoff: b.their_face_down.tradeoff ? `${plural(b.their_face_down.tradeoff, "card")} face down` : null,
    },
    bottom: {
      name: "You", tokens: b.your_tokens, hand: b.hand, playing: playing && playing.side === "bottom" ? playing.token : null,
      secret: revealed ? `${label(revealed[0])} (revealed)` : b.secret >= 0 ? label(b.secret) : null,
      tradeoff: b.tradeoff.length ? names(b.tradeoff) : null,
    },
  };
}

// The seat a replay draws at the bottom: the person's ("you", whichever seat they played), else
// seat 0; the other sits at the top, as the opponent does in live play
export const bottomSeat = (players) => (players[1] === "you" ? 1 : 0);

// The table of a replayed or watched position (all cards shown); seats 0 and 1 named `players`,
// drawn as live play draws them: the person at the bottom, an open offer on the table
export function frameTable(f, players) {
  const me = bottomSeat(players);
  const side = (s) => (s === me ? "bottom" : s === 1 - me ? "top" : null);
  const playing = f.playing ? { token: f.playing.token, offer: f.playing.offer, side: side(f.playing.by) } : null;
  const seat = (s) => ({
    name: players[s], tokens: f.tokens[s], hand: f.hands[s], playing: playing && playing.side === side(s) ? playing.token : null,
    secret: f.secrets[s] >= 0 ? label(f.secrets[s]) : null, tradeoff: f.tradeoffs[s].length ? names(f.tradeoffs[s]) : null,
  });
  const status = f.result ? "game over" : f.scoring ? "round scored" : f.to_move === null ? "round over" : `${players[f.to_move]} to move`;
  const score = (s) => ({ charm: f.score.points[s], geishas: f.score.geishas[s] });
  return {
    round: f.round, status, pile: f.draw_pile.length, toMove: side(f.to_move),
    score: { top: score(1 - me), bottom: score(me) },
    markers: f.markers.map(side), sides: { top: f.placed[1 - me], bottom: f.placed[me] },
    offer: playing && playing.offer ? { kind: playing.offer, side: playing.side, cards: f.offer, pairs: f.pairs } : null,
    top: seat(1 - me), bottom: seat(me),
  };
}

// The table a new deal starts from: nothing placed, every token left, the markers kept
export function dealt(t) {
  const zero = t.sides.top.map(() => 0);
  const fresh = (p) => ({ ...p, tokens: p.tokens.map(() => true), playing: null });
  return { ...t, sides: { top: zero, bottom: zero }, offer: null, top: fresh(t.top), bottom: fresh(t.bottom) };
}

// What changed from table a to table b, to mark on the table: stacks (and how many cards each
// gained, `added`), markers, tokens and a new offer; `fromOffer`: the cards came from an offer
// just taken, not from a hand.  A new round is compared with its fresh deal, so its first move
// is marked too
export function changes(a, b) {
  if (a && a.round !== b.round) a = dealt(b);
  if (!a) return null;
  const m = { top: [], bottom: [], tiles: [], tokens: { top: [], bottom: [] }, offer: Boolean(b.offer) && JSON.stringify(b.offer) !== JSON.stringify(a.offer) };
  m.added = { top: b.markers.map(() => 0), bottom: b.markers.map(() => 0) };
  m.fromOffer = Boolean(a.offer) && !b.offer;
  b.markers.forEach((_, g) => {
    for (const side of ["top", "bottom"]) {
      if (a.sides[side][g] !== b.sides[side][g]) m[side].push(g);
      m.added[side][g] = Math.max(0, b.sides[side][g] - a.sides[side][g]);
    }
    if (a.markers[g] !== b.markers[g]) m.tiles.push(g);
  });
  for (const side of ["top", "bottom"]) {
    b[side].tokens.forEach((left, i) => { if (a[side].tokens[i] && !left && a[side].playing !== i) m.tokens[side].push(i); });
    if (b[side].playing !== null && b[side].playing !== a[side].playing) m.tokens[side].push(b[side].playing);
  }
  m.any = m.offer || [m.top, m.bottom, m.tiles, m.tokens.top, m.tokens.bottom].some((x) => x.length);
  return m;
}

// Where in `hand` (sorted geishas) the cards just drawn lie: one copy of each, the last of its
// geisha (the server's log names each card the person draws)
export function drawnAt(hand, cards) {
  const out = [];
  for (const g of cards) {
    const free = hand.map((_, j) => j).filter((j) => hand[j] === g && !out.includes(j));
    if (free.length) out.push(free[free.length - 1]);
  }
  return out.sort((x, y) => x - y);
}
