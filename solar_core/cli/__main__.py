"""``python -m solar_core.cli``: the ``solar-memory`` command without its console script."""

from solar_core.cli.main import run

if __name__ == "__main__":
    run()
