"""The bundled training configs as package data: ``training.configs`` once installed, named by file stem
(``hanamikoji-train --config quick``; see :func:`training.config.config_path`)."""
