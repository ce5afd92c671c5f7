"""``python -m servewise`` runs the command-line interface."""

from servewise.cli import main

main()
