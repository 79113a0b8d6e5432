"""``python -m agente.cli``: la misma CLI que el guion ``agente``."""

from agente.cli.principal import main

main()
