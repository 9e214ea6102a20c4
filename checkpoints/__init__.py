"""The shipped agents as package data: ``hanamikoji_env.checkpoints`` once installed (their model card:
``hanamikoji-docs MODEL_CARD``; where they are: :mod:`hanamikoji_env.pretrained`)."""
