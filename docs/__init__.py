"""The documentation as package data: ``hanamikoji_env.docs`` once installed, read by
``hanamikoji-docs`` (:mod:`hanamikoji_env.manual`)."""
