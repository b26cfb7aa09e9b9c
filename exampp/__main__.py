"""``python -m exampp``: the ``exampp`` command."""
from exampp.cli import main

if __name__ == "__main__":
    main(prog_name="exampp")
