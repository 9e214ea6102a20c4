// The page's one state object: the flows (main.js) change it, render() (board.js) draws it.
export const state = {
  mode: "welcome",     // welcome | play | replay
  game: null,          // the latest view of the person's game (the server's JSON)
  position: null,      // what is on the table: the view, one step of it being played out, or a frame
  table: null,         // the table drawn for that position (words.js) ...
  marks: null,         // ... and what its move changed (words.js changes()), marked until the next
  step: null,          // {index, count} while the opponent's moves are played out
  busy: false,         // a move is on its way or being played out: the controls wait
  busyText: "",
  pending: null,       // a token and the hand cards chosen for it: {token, fixed, cards: [hand index]}
  pick: null,          // an answer chosen on the cards, sent on Confirm: {choice, index} or {split: [offer index]}
  seenScorings: 0,     // scorings already shown on the round-end screen
  pace: 700,           // ms between the opponent's moves as they are shown; 0 at once; -1 by hand
  lastStart: null,     // the settings of the game last started, for Play again
  replay: { frames: [], frame: 0, players: ["player_0", "player_1"], watched: false, seenEnd: false, timer: null },
  fileLines: [],       // the games of an opened record file
};
