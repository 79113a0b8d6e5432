"""axe-core (``axe_playwright_python``) en una ``Pagina`` a 1280 y a 390 px, con su captura."""

from __future__ import annotations

from .navegador import CAPTURAS, ESCRITORIO, MOVIL

__all__ = ["GRAVES", "sin_violaciones_graves"]

GRAVES = {"serious", "critical"}
# Lo que se sale por la derecha (para el mensaje del fallo): etiqueta, id y clase.
_DESBORDAN = """[...document.querySelectorAll('body *')]
  .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
  .slice(0, 8).map((e) => `${e.tagName}#${e.id}.${e.className}`)"""


def sin_violaciones_graves(pagina, nombre: str) -> None:
    """Ninguna violación seria ni crítica y nada desborda por la derecha, en los dos anchos;
    guarda ``{nombre}-escritorio.png`` y ``{nombre}-movil.png`` en ``CAPTURAS``."""
    from axe_playwright_python.sync_playwright import Axe

    CAPTURAS.mkdir(parents=True, exist_ok=True)
    for etiqueta, tamano in (("escritorio", ESCRITORIO), ("movil", MOVIL)):
        pagina.pagina.set_viewport_size(tamano)
        assert pagina.pagina.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), (
            nombre, etiqueta, pagina.pagina.evaluate(_DESBORDAN))
        resultado = Axe().run(pagina.pagina)
        graves = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
                  for v in resultado.response["violations"] if v["impact"] in GRAVES]
        assert graves == [], (nombre, etiqueta, graves)
        pagina.pagina.screenshot(path=str(CAPTURAS / f"{nombre}-{etiqueta}.png"), full_page=True)
    pagina.pagina.set_viewport_size(ESCRITORIO)
