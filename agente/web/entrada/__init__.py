"""Quién entra: los tokens firmados y las dependencias que los exigen (``auth``), OpenID
Connect (``oidc``), el correo con el enlace de entrada (``correo``), la página de rechazo
(``paginas``) y la vigencia del acceso de un flujo SSE abierto (``vigencia``)."""
