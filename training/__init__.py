"""Training and evaluation entry points (run from the repository root: python -m training.NAME)."""
