"""Chromium en las pruebas: dónde está, los tamaños de pantalla, las capturas y una pestaña anotada.

Chromium es el paquete de Debian (/usr/bin/chromium); nunca ``playwright install``. Las
fixtures ``navegador`` y ``base`` están en ``tests/navegador/conftest.py``.
"""

from __future__ import annotations

from pathlib import Path

from .rutas import RAIZ

__all__ = ["CAPTURAS", "CHROMIUM", "ESCRITORIO", "ESPERA_MS", "GRAVES", "MOVIL", "Pagina"]

CHROMIUM = Path("/usr/bin/chromium")
CAPTURAS = RAIZ / "artefactos" / "capturas"
ESCRITORIO = {"width": 1280, "height": 800}
MOVIL = {"width": 390, "height": 844}
ESPERA_MS = 15_000
GRAVES = {"serious", "critical"}  # lo que axe-core no puede encontrar


# Lo que se sale por la derecha (para el mensaje del fallo): etiqueta, id y clase.
_DESBORDAN = """[...document.querySelectorAll('body *')]
  .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
  .slice(0, 8).map((e) => `${e.tagName}#${e.id}.${e.className}`)"""


class Pagina:
    """Una pestaña en su propio contexto (sesión aparte), con los diálogos y peticiones externas anotados."""

    def __init__(self, navegador, base: str):
        from playwright.sync_api import expect

        self.expect = expect
        self.contexto = navegador.new_context(viewport=ESCRITORIO, locale="es-ES")
        self.pagina = self.contexto.new_page()
        self.dialogos: list[str] = []
        self.externas: list[str] = []
        self.errores_js: list[str] = []
        self.pagina.on("dialog", lambda d: (self.dialogos.append(d.message), d.dismiss()))
        self.pagina.on("pageerror", lambda e: self.errores_js.append(str(e)))
        self.pagina.on("request", lambda r: None if r.url.startswith(base) else self.externas.append(r.url))
        self.base = base

    def entrar(self, nombre_boton: str, destino: str) -> None:
        self.pagina.goto(f"{self.base}/demo")
        self.pagina.get_by_role("button", name=nombre_boton).click()
        self.pagina.wait_for_url(f"{self.base}{destino}")
        self.pagina.locator("body[data-listo='1']").wait_for(timeout=ESPERA_MS)

    def capturar(self, nombre: str) -> None:
        CAPTURAS.mkdir(parents=True, exist_ok=True)
        for etiqueta, tamano in (("escritorio", ESCRITORIO), ("movil", MOVIL)):
            self.pagina.set_viewport_size(tamano)
            # Usable a 390 px: nada se sale por la derecha.
            assert self.pagina.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), etiqueta
            self.pagina.screenshot(path=str(CAPTURAS / f"{nombre}-{etiqueta}.png"), full_page=True)
        self.pagina.set_viewport_size(ESCRITORIO)

    def accesible(self, nombre: str) -> None:
        """Como ``capturar``, y además axe-core sin nada serio ni crítico a cada ancho."""
        from axe_playwright_python.sync_playwright import Axe

        CAPTURAS.mkdir(parents=True, exist_ok=True)
        for etiqueta, tamano in (("escritorio", ESCRITORIO), ("movil", MOVIL)):
            self.pagina.set_viewport_size(tamano)
            assert self.pagina.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), (
                nombre, etiqueta, self.pagina.evaluate(_DESBORDAN))
            resultado = Axe().run(self.pagina)
            graves = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
                      for v in resultado.response["violations"] if v["impact"] in GRAVES]
            assert graves == [], (nombre, etiqueta, graves)
            self.pagina.screenshot(path=str(CAPTURAS / f"{nombre}-{etiqueta}.png"), full_page=True)
        self.pagina.set_viewport_size(ESCRITORIO)

    def limpia(self) -> None:
        assert self.dialogos == []
        assert self.externas == []
        assert self.errores_js == []
        assert self.pagina.evaluate("window.__xss") is None
