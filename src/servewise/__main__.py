"""``python -m servewise`` runs the command-line interface."""

from servewise.fastcli import main

main()
