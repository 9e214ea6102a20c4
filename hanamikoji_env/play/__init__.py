"""Play, watch and replay: a person against any bot in the terminal (:mod:`.tui`,
``hanamikoji-play``) or the browser (:mod:`.server`, ``hanamikoji-serve``), both
on the one game model of :mod:`.session`."""

from hanamikoji_env.play.replays import replay_frames
from hanamikoji_env.play.session import GameSession

__all__ = ["GameSession", "replay_frames"]
