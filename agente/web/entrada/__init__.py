"""Quién entra: los tokens firmados y las dependencias que los exigen (``auth``), OpenID
Connect (``oidc``) y la página de rechazo (``paginas``). El correo con el enlace de entrada
lo envía el servicio (``agente/servicio/entrada/correo.py``); la vigencia del acceso de un
flujo SSE abierto es ``agente/web/infra/vigencia.py``."""
