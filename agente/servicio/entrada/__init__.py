"""La entrada del personal sin la CLI: quién es por su correo (OIDC) y el enlace por correo
(``enlaces``: pedirlo y canjearlo; ``correo``: enviarlo)."""

from agente.servicio.entrada.enlaces import EnlaceEntrada, canjear_enlace, pedir_enlace
from agente.servicio.entrada.personal import encargado_por_email

__all__ = ["EnlaceEntrada", "canjear_enlace", "encargado_por_email", "pedir_enlace"]
