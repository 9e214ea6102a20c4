"""The bundled training configs as package data: ``hanamikoji_env.training.configs`` once installed,
named by file stem (``hanamikoji-train --config quick``; see
:func:`hanamikoji_env.training.config.config_path`)."""
