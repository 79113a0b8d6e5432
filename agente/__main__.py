"""``python -m agente``: la misma CLI que el guion ``agente``."""

from agente.cli import main

main()
