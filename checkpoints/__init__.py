"""The shipped agents as package data: ``hanamikoji_env.checkpoints`` once installed (see MODEL_CARD.md and
:mod:`hanamikoji_env.pretrained`)."""
