"""La página de rechazo de la entrada del personal: HTML del servidor, en español, sin
scripts (todo texto que viene de fuera, escapado)."""

from __future__ import annotations

from html import escape

from fastapi.responses import HTMLResponse

__all__ = ["rechazo"]

_PLANTILLA = """<!doctype html>
<html lang="es">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>No has podido entrar</title>
  <link rel="stylesheet" href="/estaticos/estilo.css">
</head>
<body class="pagina-encargado">
  <header class="cabecera"><h1>Bandeja del encargado</h1></header>
  <main id="principal">
    <section class="panel" aria-labelledby="titulo-rechazo">
      <h2 id="titulo-rechazo">{titulo}</h2>
      <p id="motivo-rechazo" role="alert">{detalle}</p>
      <p>No se ha creado ninguna cuenta ni se ha guardado nada.</p>
      <p><a href="/encargado">Volver a la página de entrada</a></p>
    </section>
  </main>
</body>
</html>
"""


def rechazo(detalle: str, *, estado: int = 403, titulo: str = "No has podido entrar") -> HTMLResponse:
    return HTMLResponse(
        _PLANTILLA.format(titulo=escape(titulo), detalle=escape(detalle)), status_code=estado,
        headers={"Cache-Control": "no-store"},
    )
