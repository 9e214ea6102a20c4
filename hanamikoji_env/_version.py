"""The package version, alone in a module so that low modules can record it without importing the envs."""

__version__ = "0.1.0"
