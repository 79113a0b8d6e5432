"""``docs/empezar-tienda.md`` de principio a fin (issue 43, punto 1): de una base vacía, solo
con las órdenes de la guía (sus bloques ``bash``, en orden y tal cual, en un ``bash`` de
verdad con ``agente`` en el ``PATH``), se crean la región, la tienda, el gerente y el
encargado, el gerente entra por el enlace de su correo (SMTP real, aiosmtpd), se ingiere un
pedido con la clave de la tienda, un cliente pide un reembolso que necesita firma y el
encargado creado lo firma en Chromium tras entrar por su enlace de correo.

La guía manda: la prueba no añade órdenes. Solo hace lo que la guía dice que hace una
persona (pegar el enlace que llega al correo, la bandeja en el navegador, en la marca
``<!-- prueba: bandeja -->``), arranca ``agente serve`` en segundo plano en un puerto libre
y comprueba que cada bloque ``text`` es lo que imprimió el bloque anterior.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.apoyo.navegador import ESPERA_MS, Pagina
from tests.apoyo.procesos import esperar
from tests.apoyo.rutas import RAIZ
from tests.apoyo.web_util import SECRETO, esperar_salud, puerto_libre, sql

pytestmark = pytest.mark.navegador

GUIA = RAIZ / "docs" / "empezar-tienda.md"
BLOQUE = re.compile(r"^```(\w+)\n(.*?)^```$|^<!-- prueba: (\w+) -->$", re.S | re.M)
ASUNTO_ENLACE = "Tu enlace para entrar en la bandeja"
LUIS = "luis.pardo@mitienda.es"


def _pasos() -> list[tuple[str, str]]:
    return [(m.group(1) or "marca", m.group(2) or m.group(3)) for m in BLOQUE.finditer(GUIA.read_text(encoding="utf-8"))]


def _enlace(smtp, para: str, antes: int = 0) -> str:
    """El enlace del último correo de entrada que llegó a ``para`` (después de los ``antes`` primeros)."""
    def llegado():
        correos = [c for c in smtp.correos[antes:] if c.para == [para] and c.asunto == ASUNTO_ENLACE]
        return correos[-1] if correos else None
    correo = esperar(llegado, 60, f"el correo de entrada a {para}")
    return re.search(r"http://\S+", correo.texto).group(0)


class _Guia:
    """Los bloques de la guía en un bash de verdad, con el entorno de la guía."""

    def __init__(self, env: dict[str, str], carpeta: Path, smtp) -> None:
        self.env, self.carpeta, self.smtp = env, carpeta, smtp
        self.salidas: list[str] = []

    def bash(self, orden: str) -> str:
        salida = self.carpeta / f"salida-{len(self.salidas)}.txt"
        with salida.open("w") as fichero:
            proceso = subprocess.Popen(["bash", "-euo", "pipefail", "-c", orden], cwd=self.carpeta, env=self.env,
                                       stdin=subprocess.PIPE, stdout=fichero, stderr=subprocess.STDOUT, text=True,
                                       start_new_session=True)  # sin terminal: lo pegado llega por stdin
            correo = re.search(r"agente entrar --correo (\S+)", orden)
            if correo:  # la persona pega el enlace que le llega
                antes = len(self.smtp.correos)
                hilo = threading.Thread(target=self._pegar, args=(proceso, correo.group(1), antes), daemon=True)
                hilo.start()
            else:
                proceso.stdin.close()
            try:
                codigo = proceso.wait(timeout=300)
            finally:
                if proceso.poll() is None:
                    os.killpg(proceso.pid, signal.SIGKILL)
        texto = salida.read_text(encoding="utf-8")
        assert codigo == 0, f"$ {orden}\n{texto}"
        self.salidas.append(texto)
        return texto

    def _pegar(self, proceso: subprocess.Popen, correo: str, antes: int) -> None:
        try:
            proceso.stdin.write(_enlace(self.smtp, correo, antes) + "\n")
        finally:
            proceso.stdin.close()


def _entorno(bd_url: str, base: str, smtp, config: Path) -> dict[str, str]:
    fuera = ("DATABASE_URL", "AGENTE_DEMO", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "PROMETHEUS_MULTIPROC_DIR")
    env = {k: v for k, v in os.environ.items() if k not in fuera and not k.startswith("AGENTE_")}
    return {**env, "DATABASE_URL": bd_url, "AGENTE_SECRETO": SECRETO, "AGENTE_MODELO": "offline",
            "AGENTE_SMTP_URL": smtp.url, "AGENTE_AVISOS_BASE_URL": base, "AGENTE_URL": base,
            "XDG_CONFIG_HOME": str(config), "PYTHONPATH": str(RAIZ),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"}


def _bandeja(navegador, base: str, smtp) -> None:
    """Lo que la guía cuenta del encargado: entra por su enlace de correo y firma en Chromium."""
    p = Pagina(navegador, base)
    p.pagina.goto(f"{base}/encargado")
    p.pagina.get_by_label("Tu correo de encargado: te enviamos un enlace para entrar").fill(LUIS)
    antes = len(smtp.correos)
    p.pagina.get_by_role("button", name="Enviarme un enlace").click()
    p.pagina.goto(_enlace(smtp, LUIS, antes))
    p.pagina.get_by_role("button", name="Entrar en la bandeja").click()
    p.pagina.wait_for_url(f"{base}/encargado", timeout=ESPERA_MS)
    p.expect(p.pagina.locator("#sesion")).to_have_text("Luis Pardo · Encargado · Mi Tienda", timeout=ESPERA_MS)
    tarjeta = p.pagina.locator("article.tarjeta", has_text="Carmen Vidal")
    p.expect(tarjeta).to_be_visible(timeout=ESPERA_MS)
    p.expect(tarjeta).to_contain_text("120,00", timeout=ESPERA_MS)
    tarjeta.get_by_role("button", name="Aprobar").click()
    tarjeta.get_by_role("button", name="Enviar decisión").click()
    p.expect(tarjeta.locator(".resultado")).to_contain_text("Decisión aplicada", timeout=ESPERA_MS)
    assert p.errores_js == []
    p.contexto.close()


def test_de_una_base_vacia_a_la_primera_firma_siguiendo_solo_la_guia(navegador, bd_vacia_url, smtp, tmp_path):
    puerto = puerto_libre()
    base = f"http://127.0.0.1:{puerto}"
    env = _entorno(bd_vacia_url, base, smtp, tmp_path / "config")
    pasos = _pasos()
    # Lo que la guía pide configurar es justo lo que la prueba configura.
    ajustes = [c for t, c in pasos if t == "dotenv"]
    assert len(ajustes) == 1
    nombres = {linea.split("=", 1)[0] for linea in ajustes[0].splitlines() if "=" in linea}
    assert nombres == {k for k in env if k == "DATABASE_URL" or k.startswith("AGENTE_")}
    assert sql(bd_vacia_url, "SELECT count(*) AS n FROM tiendas")[0]["n"] == 0

    guia = _Guia(env, tmp_path, smtp)
    servidor = None
    try:
        for tipo, contenido in pasos:
            if tipo == "bash" and contenido.strip().startswith("agente serve"):
                log = (tmp_path / "serve.log").open("w")
                servidor = subprocess.Popen(["bash", "-c", "exec " + contenido.strip().replace("8000", str(puerto))],
                                            cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
                esperar_salud(base, servidor, limite=120, log=log)
            elif tipo == "bash":
                guia.bash(contenido)
            elif tipo == "text":
                for linea in contenido.strip().splitlines():
                    assert linea in guia.salidas[-1], (linea, guia.salidas[-1])
            elif tipo == "marca" and contenido == "bandeja":
                _bandeja(navegador, base, smtp)
    finally:
        if servidor is not None:
            servidor.terminate()
            try:
                servidor.wait(timeout=20)
            except subprocess.TimeoutExpired:
                servidor.kill()

    # Lo que pasó, en la base: quién hizo cada alta, el reembolso firmado por el encargado creado.
    altas = sql(bd_vacia_url, "SELECT quien, objeto_id, accion FROM cambios_alta ORDER BY id")
    assert [(a["quien"], a["objeto_id"], a["accion"]) for a in altas] == [
        ("operador", "admin", "primera"), ("admin", "centro", "crear"), ("admin", "mi-tienda", "crear"),
        ("admin", "ger-mi-tienda", "crear"), ("ger-mi-tienda", "enc-mi-tienda", "crear")]
    assert sql(bd_vacia_url, "SELECT rol FROM encargados WHERE id = 'ger-mi-tienda'")[0]["rol"] == "gerente"
    firmas = sql(bd_vacia_url, "SELECT encargado_id, rol, tienda FROM firmas_aprobacion")
    assert firmas == [{"encargado_id": "enc-mi-tienda", "rol": "encargado", "tienda": "mi-tienda"}]
    reembolsos = sql(bd_vacia_url, "SELECT importe::text AS importe, aprobado_por FROM reembolsos "
                                   "WHERE pedido_id = 'P-20261201-0001'")
    assert reembolsos == [{"importe": "120.00", "aprobado_por": "enc-mi-tienda"}]
    assert "Reembolso" in guia.salidas[-1]
