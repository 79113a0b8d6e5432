"""Matar el servidor (SIGKILL) entre la decisión y el correo al cliente: al volver a
arrancar sale exactamente un correo (SMTP real, aiosmtpd), con el enlace a esa conversación.

Dos momentos: con la decisión ya aplicada y el correo en la cola de avisos (las tareas
periódicas aún no han pasado), y con la decisión a medias (la pasarela colgada en el
reembolso): ahí el conciliador la termina al arrancar y el correo sale después.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from datetime import UTC, datetime, timedelta
from urllib.parse import unquote

import httpx
import jwt
import pytest

from tests.apoyo.fabricas_avisos import pasadas_de_entrega
from tests.apoyo.web_util import (
    DEVOLVER_CAFETERA,
    SECRETO,
    ServidorEnProceso,
    cab,
    sql,
)

pytestmark = [pytest.mark.lento, pytest.mark.temporal]

ANA = "ana.garcia@example.com"


def _token(rol: str, sujeto: str) -> str:
    campo = "cliente_id" if rol == "cliente" else "encargado_id"
    ahora = datetime.now(UTC)
    return jwt.encode({"rol": rol, campo: sujeto, "tienda": "talavera", "iat": ahora,
                       "exp": ahora + timedelta(hours=1)}, SECRETO, algorithm="HS256")


def _esperar(condicion, limite: float, que: str):
    fin = time.monotonic() + limite
    while time.monotonic() < fin:
        if valor := condicion():
            return valor
        time.sleep(0.1)
    raise AssertionError(f"no llegó a tiempo ({limite} s): {que}")


def _de_ana(smtp):
    return [c for c in smtp.correos if ANA in c.para]


def _matar(servidor: ServidorEnProceso) -> None:
    os.killpg(servidor.proceso.pid, signal.SIGKILL)  # el proceso y lo que haya arrancado
    servidor.proceso.wait(timeout=30)


def _cliente_espera(base: str) -> str:
    cliente = cab(_token("cliente", "C-0001"))
    hilo = httpx.post(f"{base}/api/conversaciones", headers=cliente, timeout=30).json()["thread_id"]
    r = httpx.post(f"{base}/api/conversaciones/{hilo}/mensajes", json={"texto": DEVOLVER_CAFETERA},
                   headers=cliente, timeout=60)
    assert r.json()["estado"] == "esperando_aprobacion", r.text
    return hilo


def _decidir(base: str, hilo: str, timeout: float = 60) -> httpx.Response:
    return httpx.post(f"{base}/api/aprobaciones/{hilo}/decision",
                      json={"decisiones": [{"type": "approve"}]},
                      headers=cab(_token("encargado", "enc-talavera")), timeout=timeout)


def _decidir_sin_respuesta(base: str, hilo: str) -> None:
    """La decisión que no llega a responder: el servidor muere mientras la aplica."""
    try:
        _decidir(base, hilo, timeout=120)
    except httpx.HTTPError:
        pass


def _vuelve_y_sale_uno(bd_url: str, smtp, hilo: str, base_url: str) -> None:
    with ServidorEnProceso(bd_url, AGENTE_SMTP_URL=smtp.url, AGENTE_INTERVALO_TAREAS="0.5",
                           AGENTE_AVISOS_BASE_URL=base_url) as servidor:
        servidor.esperar()
        _esperar(lambda: _de_ana(smtp), 60, "el correo al cliente tras volver a arrancar")
        assert pasadas_de_entrega(bd_url, smtp_url=smtp.url, base_url=base_url) == 0  # ninguna lo repite
        [correo] = _de_ana(smtp)
    assert "aprobada" in correo.asunto
    token = unquote(re.search(r"/#token=(\S+)", correo.texto).group(1))
    assert jwt.decode(token, SECRETO, algorithms=["HS256"])["hilo"] == hilo
    assert correo.texto.startswith("Hola, Ana:")
    filas = sql(bd_url, "SELECT estado FROM avisos_salida WHERE tipo = 'cliente'")
    assert [f["estado"] for f in filas] == ["enviado"]
    assert sql(bd_url, "SELECT count(*) AS n FROM reembolsos")[0]["n"] == 1


def test_sigkill_con_el_correo_en_la_bandeja_de_salida_sale_uno_al_volver(bd_url, smtp):
    # Tareas cada hora: tras la primera pasada (al arrancar) nada entrega el correo.
    with ServidorEnProceso(bd_url, AGENTE_SMTP_URL=smtp.url, AGENTE_INTERVALO_TAREAS="3600",
                           AGENTE_AVISOS_BASE_URL="http://tienda.example") as servidor:
        base = servidor.esperar()
        hilo = _cliente_espera(base)  # sin flujo SSE abierto: el chat está cerrado
        assert _decidir(base, hilo).json()["estado"] == "aplicada"
        assert sql(bd_url, "SELECT estado FROM avisos_salida WHERE tipo = 'cliente'") == [{"estado": "pendiente"}]
        _matar(servidor)
    assert _de_ana(smtp) == []
    _vuelve_y_sale_uno(bd_url, smtp, hilo, "http://tienda.example")


def test_sigkill_con_la_decision_a_medias_el_conciliador_la_termina_y_sale_un_correo(bd_url, smtp):
    with ServidorEnProceso(bd_url, AGENTE_SMTP_URL=smtp.url, AGENTE_INTERVALO_TAREAS="3600",
                           AGENTE_PASARELA_RETARDO="60") as servidor:
        base = servidor.esperar()
        hilo = _cliente_espera(base)
        # La decisión se registra y se cuelga en la pasarela (60 s): se mata ahí.
        threading.Thread(target=_decidir_sin_respuesta, args=(base, hilo), daemon=True).start()
        _esperar(lambda: sql(bd_url, "SELECT count(*) AS n FROM reembolsos WHERE estado = 'pendiente'")[0]["n"],
                 60, "el reembolso aprobado, a medias en la pasarela")
        _matar(servidor)
    assert sql(bd_url, "SELECT count(*) AS n FROM avisos_salida WHERE tipo = 'cliente'")[0]["n"] == 0
    _vuelve_y_sale_uno(bd_url, smtp, hilo, "http://127.0.0.1:8000")
