"""Varios procesos que solo comparten PostgreSQL: ``agente serve`` de verdad, en subprocesos.

Dos servidores en dos puertos sobre la misma base: A es ``agente serve --workers 2`` en un
subproceso (dos procesos worker); B es la misma app servida por uvicorn en este proceso (su
arranque se solapa con el de A). La pausa nace en A, la decide B, y el flujo ``/eventos``
abierto en A recibe el mensaje que escribió B (LISTEN/NOTIFY entre procesos).
"""

from __future__ import annotations

import queue
import threading

import httpx
import pytest

from agente.web.app import crear_app
from tests.apoyo.web_util import (
    DEVOLVER_CAFETERA,
    ServidorEnProceso,
    ajustes_web,
    cab,
    eventos_sse,
    servidor_en_hilo,
    token,
)

pytestmark = [pytest.mark.lento, pytest.mark.temporal]


def _escuchar(url: str, recibidos: queue.Queue, abierto: threading.Event, tok: str) -> None:
    try:
        with httpx.stream("GET", url, headers={"Authorization": f"Bearer {tok}"},
                          timeout=httpx.Timeout(60, read=60)) as r:
            recibidos.put(("http", r.status_code))
            abierto.set()
            for tipo, datos in eventos_sse(r.iter_lines()):
                recibidos.put((tipo, datos))
                if tipo == "mensaje" and datos["rol"] == "agente":
                    return
    except httpx.HTTPError as exc:
        recibidos.put(("fallo", repr(exc)))
        abierto.set()


def test_pausa_en_un_servidor_decidida_en_otro_llega_por_eventos_al_primero(bd_url):
    ajustes = ajustes_web(bd_url)
    cliente = cab(token(ajustes, "C-0001"))
    encargado = cab(token(ajustes, "enc-talavera"))
    with ServidorEnProceso(bd_url, workers=2) as servidor_a, servidor_en_hilo(crear_app(ajustes)) as b:
        a = servidor_a.esperar()
        hilo = httpx.post(f"{a}/api/conversaciones", headers=cliente).json()["thread_id"]
        r = httpx.post(f"{a}/api/conversaciones/{hilo}/mensajes", json={"texto": DEVOLVER_CAFETERA},
                       headers=cliente, timeout=60)
        assert r.json()["estado"] == "esperando_aprobacion"
        ultimo = max(m["id"] for m in httpx.get(f"{a}/api/conversaciones/{hilo}", headers=cliente).json()["mensajes"])

        # B ve la cola compartida.
        pendientes = httpx.get(f"{b}/api/aprobaciones", headers=encargado).json()
        assert [p["thread_id"] for p in pendientes] == [hilo]

        recibidos: queue.Queue = queue.Queue()
        abierto = threading.Event()
        url = f"{a}/api/conversaciones/{hilo}/eventos?desde={ultimo}"
        oyente = threading.Thread(target=_escuchar, args=(url, recibidos, abierto, token(ajustes, "C-0001")),
                                  daemon=True)
        oyente.start()
        assert abierto.wait(30)
        assert recibidos.get(timeout=5) == ("http", 200)

        decision = httpx.post(
            f"{b}/api/aprobaciones/{hilo}/decision",
            json={"decisiones": [{"type": "edit", "edited_action": {"name": "reembolsar", "args": {
                "pedido": "P-20260917-0041", "importe": "90.00", "motivo": "gotea"}}}]},
            headers=encargado, timeout=60,
        )
        assert decision.status_code == 200, decision.text
        tipo, datos = recibidos.get(timeout=10)  # < RELECTURA_SEGUNDOS (15): llega por NOTIFY
        assert tipo == "mensaje", (tipo, datos)
        assert datos["rol"] == "agente"
        assert datos["texto"] == decision.json()["mensaje_cliente"]
        assert "90,00 EUR" in datos["texto"]
        assert datos["estado"] == "abierta"
        oyente.join(timeout=10)

        # Una segunda decisión, por cualquiera de los dos, ya no encuentra nada pendiente.
        otra = httpx.post(f"{a}/api/aprobaciones/{hilo}/decision", json={"decisiones": [{"type": "approve"}]},
                          headers=encargado, timeout=60)
        assert otra.status_code == 404

        # Métricas en modo multiproceso: A suma sus dos procesos y lee la cola de la base.
        metricas = httpx.get(f"{a}/metrics").text
        assert 'agente_aprobaciones_pendientes{tienda="talavera"} 0.0' in metricas
        assert "agente_latencia_turno_segundos_count" in metricas
