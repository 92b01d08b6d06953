"""Policy training on the vector envs (docs/env.md): PPO in pure tinygrad.

Loaded lazily so `python -m engine.train.ppo` does not import the module twice."""


def __getattr__(name):
  if name in ("train_ppo", "evaluate"):
    from engine.train import ppo
    return getattr(ppo, name)
  raise AttributeError(f"module 'engine.train' has no attribute {name!r}")
