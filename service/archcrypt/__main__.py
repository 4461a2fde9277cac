"""`python -m archcrypt`: the same command as the `archcrypt` script."""

from archcrypt.cli import main

main(prog_name="archcrypt")
